#!/usr/bin/env python3
"""Remove the iptables/ip6tables rules and chains that appeared since cluster-up.

cluster-up saves `iptables-save -t TABLE` to CLUSTER_DIR/iptables.{v4,v6}.TABLE.before
before it (or kubelet, or the CNI plugins) touch anything. This compares the
current rules with those and deletes only what is new: rules first, then the
new chains. Rules that existed before are never touched.
usage: iptables-restore-diff.py CLUSTER_DIR
"""
import os, shlex, subprocess, sys

BUILTIN = {"INPUT", "OUTPUT", "FORWARD", "PREROUTING", "POSTROUTING"}


def parse(text):
    chains, rules = [], []
    for line in text.splitlines():
        if line.startswith(":"):
            chains.append(line[1:].split()[0])
        elif line.startswith("-A "):
            rules.append(line)
    return chains, rules


def main():
    d = sys.argv[1]
    ok = True
    for fam, save, cmd in (("v4", "iptables-save", "iptables"), ("v6", "ip6tables-save", "ip6tables")):
        for table in ("filter", "nat", "mangle"):
            path = os.path.join(d, f"iptables.{fam}.{table}.before")
            if not os.path.exists(path):
                continue
            before_chains, before_rules = parse(open(path).read())
            try:
                now = subprocess.run([save, "-t", table], capture_output=True, text=True, check=True).stdout
            except (OSError, subprocess.CalledProcessError):
                continue
            chains, rules = parse(now)
            new_chains = [c for c in chains if c not in before_chains and c not in BUILTIN]
            before_set = set(before_rules)
            for r in reversed(rules):
                if r in before_set:
                    continue
                args = shlex.split(r)
                if args[1] in new_chains:
                    continue  # flushed below
                res = subprocess.run([cmd, "-w", "-t", table, "-D"] + args[1:], capture_output=True, text=True)
                if res.returncode != 0:
                    ok = False
                    print(f"{cmd} -t {table} -D {' '.join(args[1:])}: {res.stderr.strip()}", file=sys.stderr)
            for c in new_chains:
                subprocess.run([cmd, "-w", "-t", table, "-F", c], capture_output=True)
            for c in new_chains:
                res = subprocess.run([cmd, "-w", "-t", table, "-X", c], capture_output=True, text=True)
                if res.returncode != 0:
                    ok = False
                    print(f"{cmd} -t {table} -X {c}: {res.stderr.strip()}", file=sys.stderr)
            if new_chains:
                print(f"{cmd} {table}: removed chains {' '.join(new_chains)}", file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
