import type { GitTree } from "../git-port.ts";

// What MirrorReader remembers between requests, so a repeated read spawns no
// git: each git command was a process start (a CPU profile of the files
// benchmark: a fifth of the service's time in spawn). A page of a tree is
// keyed by its commit id, and a commit's tree never changes. A ref's commit
// changes only when the mirror fetches, so it is kept with the mirror's fetch
// stamp (MirrorAccess.fetchStamp) and not used once another fetch finished.

/** A bounded map that forgets the least recently used entry first. */
class Lru<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  set(key: string, v: V): void {
    if (this.#max <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, v);
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value!);
  }

  deleteWhere(test: (key: string) => boolean): void {
    for (const key of this.#map.keys()) if (test(key)) this.#map.delete(key);
  }
}

export class ReadCache {
  readonly #trees: Lru<GitTree>;
  readonly #refs: Lru<{ commit: string; stamp: number }>;

  /** `entries`: tree pages and resolved refs kept, each; 0 turns the cache off. */
  constructor(entries: number) {
    this.#trees = new Lru(entries);
    this.#refs = new Lru(entries);
  }

  commit(repoKey: string, ref: string, stamp: number): string | null {
    const hit = this.#refs.get(`${repoKey}\0${ref}`);
    return hit && hit.stamp === stamp ? hit.commit : null;
  }

  setCommit(repoKey: string, ref: string, stamp: number, commit: string): void {
    this.#refs.set(`${repoKey}\0${ref}`, { commit, stamp });
  }

  tree(repoKey: string, page: string): GitTree | undefined {
    return this.#trees.get(`${repoKey}\0${page}`);
  }

  setTree(repoKey: string, page: string, tree: GitTree): void {
    this.#trees.set(`${repoKey}\0${page}`, tree);
  }

  /** A removed mirror's entries (its id may be registered again with other contents). */
  forget(repoKey: string): void {
    const mine = (key: string) => key.startsWith(`${repoKey}\0`);
    this.#trees.deleteWhere(mine);
    this.#refs.deleteWhere(mine);
  }
}
