// The process entry for `node src/main.ts <command>`: runs the CLI (src/cli),
// as bin/codeplane.mjs does. The service itself is composed in service.ts, so
// the CLI can import it without importing its own entry.
if (import.meta.main) {
  const { runCli } = await import("./cli/index.ts");
  runCli(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`codeplane: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
