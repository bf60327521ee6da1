// One leader-election candidate as a process of its own, so a test can
// SIGKILL it like a crashed replica. Prints "leading" and "stopped" lines.
import { CoordinationV1Api, KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { LeaderElector } from "../../../src/controller/leader-election.ts";

const kc = new KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG!);
const elector = new LeaderElector({
  api: kc.makeApiClient(CoordinationV1Api),
  namespace: process.env.LEASE_NAMESPACE!,
  name: process.env.LEASE_NAME!,
  identity: process.env.IDENTITY!,
  leaseSeconds: Number(process.env.LEASE_SECONDS ?? 10),
  logger: pino({ level: "silent" }),
  onStartedLeading: async () => void process.stdout.write("leading\n"),
  onStoppedLeading: async () => void process.stdout.write("stopped\n"),
});
elector.start();
process.on("SIGTERM", () => {
  void elector.stop().then(() => process.exit(0));
});
// The elector's timers do not keep a process alive (a service's listener does): this one has nothing else.
setInterval(() => undefined, 1 << 30);
