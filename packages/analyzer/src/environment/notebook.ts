import { emptyPart, type EnvironmentInput, type EnvironmentPart } from "./part.ts";

// Notebook experiments run as `papermill in.ipynb out.ipynb`: papermill and
// a Jupyter kernel must be in the environment's Python. The kernel is
// registered as "python3" (the name notebooks' metadata almost always
// gives) inside the venv (--sys-prefix), pointing at the venv's own
// interpreter, so the notebook sees the packages the install put there.

export function resolveNotebook(input: EnvironmentInput): EnvironmentPart {
  const part = emptyPart();
  const notebooks = input.experiments.filter((e) => e.kind === "notebook");
  if (!notebooks.length) return part;
  part.toolchains.push({ name: "python", version: null, exact: false, source: `notebook experiments (${notebooks.length}) run with papermill` });
  part.steps.push(
    {
      name: "provide papermill and ipykernel",
      run: "pip install --no-input papermill ipykernel",
      why: `${notebooks.length === 1 ? "A notebook experiment runs" : "Notebook experiments run"} with papermill, which executes the notebook in a Jupyter kernel: both come from the package index (the mirror). Installed after the repository's own dependencies, so its pins are kept where they agree.`,
      ecosystem: "notebook",
    },
    {
      name: "register the python3 kernel",
      run: 'python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (codeplane)"',
      why: "papermill starts the kernel the notebook names (python3): registered in the venv, so it runs the venv's Python with the repository's packages.",
      ecosystem: "notebook",
    },
  );
  return part;
}
