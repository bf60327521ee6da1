import type { GitCommit } from "../git-port.ts";

// A commit's message, author and committer, read with one `git show -s` in
// the mirror (mirror-reader.ts): the repository page shows the last commit
// at the ref it browses. git writes the fields NUL-separated (a NUL cannot
// be in a name, an email or a message: git refuses to store one), the message
// last, re-encoded to UTF-8 when the commit declares another encoding.

/** The message is cut to this many characters (a commit message can be megabytes). */
export const MAX_COMMIT_MESSAGE = 64 * 1024;

/** The `git show -s` arguments parseCommitInfo reads (before the commit's id). */
export const COMMIT_INFO_ARGS = ["show", "-s", "--no-notes", "--no-show-signature", "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"];

/** The output's bytes most worth reading: the fields and the message's cut, with room for multi-byte characters. */
export const COMMIT_INFO_MAX_BYTES = MAX_COMMIT_MESSAGE * 4 + 4096;

/** null when the output is not what COMMIT_INFO_ARGS prints (the caller answers with an error). */
export function parseCommitInfo(out: string): GitCommit | null {
  const f = out.split("\0");
  if (f.length < 9) return null;
  const [hash, parents, an, ae, ad, cn, ce, cd] = f as [string, string, string, string, string, string, string, string];
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(hash)) return null;
  // The message is what follows the eighth NUL (it holds none); git ends it with a newline.
  const message = f.slice(8).join("").replace(/\n+$/, "").slice(0, MAX_COMMIT_MESSAGE);
  return {
    commit_hash: hash,
    title: message.split("\n", 1)[0] ?? "",
    message,
    author: { name: an, email: ae, date: ad },
    committer: { name: cn, email: ce, date: cd },
    parents: parents === "" ? [] : parents.split(" "),
  };
}
