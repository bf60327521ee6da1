// uPlot's ES module, served at /ui/app/uplot.js from its package (src/ui/router.ts): its own types.
export { default } from "uplot";
