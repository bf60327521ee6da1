import { installCluster, InstallRefusedError } from "../k8s/install.ts";
import { connectKubernetes, NO_KUBERNETES } from "../service.ts";
import type { CommandGroup } from "./command.ts";

/** codeplane install: the CRDs, the namespace and the workload NetworkPolicy, in the KUBECONFIG cluster (development). */
export const run: CommandGroup = async ({ config, logger, print }) => {
  const kube = connectKubernetes(config, logger);
  if (!kube) {
    process.stderr.write(`codeplane: ${NO_KUBERNETES}\n`);
    return 1;
  }
  try {
    const result = await installCluster(kube.config, config);
    for (const w of result.warnings) process.stderr.write(`codeplane: warning: ${w}\n`);
    print(result);
    return 0;
  } catch (err) {
    if (!(err instanceof InstallRefusedError)) throw err;
    process.stderr.write(`codeplane: install refused, nothing was changed: ${err.message}\n`);
    return 2;
  }
};
