import type { KubeClients } from "./client.ts";
import { ANALYSIS_KIND, ANALYSIS_PLURAL, type AnalysisSpec, type AnalysisStatus } from "../resources/analysis.ts";
import { RUN_KIND, RUN_PLURAL, type RunSpec, type RunStatus } from "../resources/run.ts";
import { CustomResources, type CustomResource } from "./custom-resources.ts";
import { analysisLabels, analysisResourceName, runLabels, runResourceName } from "../resources/labels.ts";

export type RunResource = CustomResource<RunSpec, RunStatus>;
export type AnalysisResource = CustomResource<AnalysisSpec, AnalysisStatus>;

export class RunResources extends CustomResources<RunSpec, RunStatus> {
  constructor(k: KubeClients, installation: string) {
    super(
      k,
      { kind: RUN_KIND, plural: RUN_PLURAL, nameOf: (s) => runResourceName(s.runId), labelsOf: (s) => runLabels(s.accountId, s.repositoryId, s.runId) },
      installation,
    );
  }
}

export class AnalysisResources extends CustomResources<AnalysisSpec, AnalysisStatus> {
  constructor(k: KubeClients, installation: string) {
    super(
      k,
      {
        kind: ANALYSIS_KIND,
        plural: ANALYSIS_PLURAL,
        nameOf: (s) => analysisResourceName(s.analysisId),
        labelsOf: (s) => analysisLabels(s.accountId, s.repositoryId, s.analysisId),
      },
      installation,
    );
  }
}
