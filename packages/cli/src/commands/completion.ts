import { UsageError } from "../args.ts";
import type { Ctx } from "../main.ts";
import { COMMANDS, GLOBAL_OPTIONS, type CommandSpec } from "../spec.ts";

// Shell completion, written from the command table (src/spec.ts), so it never
// lists a command or option cpl does not have: command words, then each
// command's options, and the values of options with choices. zsh loads the
// same function through bashcompinit.

const optionWords = (c: CommandSpec) => [...c.options, ...GLOBAL_OPTIONS].flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]).join(" ");

export function bashScript(): string {
  const groups = [...new Set(COMMANDS.map((c) => c.words[0]!))];
  const subs = groups
    .filter((g) => COMMANDS.some((c) => c.words[0] === g && c.words.length === 2))
    .map(
      (g) =>
        `    ${g}) [[ $COMP_CWORD -eq 2 ]] && { COMPREPLY=($(compgen -W "${COMMANDS.filter((c) => c.words[0] === g)
          .map((c) => c.words[1])
          .join(" ")}" -- "$cur")); return; } ;;`,
    );
  const opts = COMMANDS.map((c) => `    "${c.words.join(" ")}") opts="${optionWords(c)}" ;;`);
  const choices = [...COMMANDS.flatMap((c) => c.options), ...GLOBAL_OPTIONS]
    .filter((o) => o.choices)
    .map(
      (o) => `    ${[`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])].join("|")}) COMPREPLY=($(compgen -W "${o.choices!.join(" ")}" -- "$cur")); return ;;`,
    );
  return `# cpl completion for bash: source <(cpl completion bash)
_cpl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local w1="\${COMP_WORDS[1]}" w2="\${COMP_WORDS[2]}" opts=""
  local i; for ((i = 1; i < COMP_CWORD; i++)); do [[ "\${COMP_WORDS[i]}" == "--" ]] && return; done
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${groups.join(" ")} help version" -- "$cur")); return
  fi
  case "$w1" in
${subs.join("\n")}
  esac
  case "$prev" in
${[...new Set(choices)].join("\n")}
  esac
  case "$w1 $w2" in
${opts.join("\n")}
    *) case "$w1" in
${COMMANDS.filter((c) => c.words.length === 1)
  .map((c) => `      ${c.words[0]}) opts="${optionWords(c)}" ;;`)
  .join("\n")}
    esac ;;
  esac
  [[ "$cur" == -* ]] && COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o default -F _cpl cpl
`;
}

export function zshScript(): string {
  return `#compdef cpl
# cpl completion for zsh: source <(cpl completion zsh), or save it as _cpl in a directory of $fpath
autoload -U +X bashcompinit && bashcompinit
${bashScript()}`;
}

export async function completion(ctx: Ctx): Promise<void> {
  const shell = ctx.args[0];
  if (shell !== "bash" && shell !== "zsh") throw new UsageError(`completion for bash or zsh (got ${JSON.stringify(shell)})`);
  ctx.io.stdout.write(shell === "bash" ? bashScript() : zshScript());
}
