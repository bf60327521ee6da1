import { describe, expect, it } from "vitest";
import { parseMetricLine, parseMetricRecord } from "./metric-form.ts";

describe("printed metric lines", () => {
  it.each([
    ["::metric name=loss::0.25", [{ name: "loss", value: 0.25 }]],
    ["::metric name=loss,step=3::0.25", [{ name: "loss", value: 0.25, step: 3 }]],
    ["::metric step=3,name=val/acc::-1e-3", [{ name: "val/acc", value: -0.001, step: 3 }]],
    ["::metric name=train loss , step=0:: 7 ", [{ name: "train loss", value: 7, step: 0 }]],
    ["::metric name=loss::.5\r", [{ name: "loss", value: 0.5 }]],
    ['::metric::{"name":"loss","value":0.25,"step":3}', [{ name: "loss", value: 0.25, step: 3 }]],
    ['::metric::{"name":"loss","value":"0.25"}', [{ name: "loss", value: 0.25 }]],
    [
      '::metric::{"step":2,"metrics":{"loss":0.5,"acc":0.9}}',
      [
        { name: "loss", value: 0.5, step: 2 },
        { name: "acc", value: 0.9, step: 2 },
      ],
    ],
  ])("%s", (line, records) => {
    expect(parseMetricLine(line)).toEqual({ records });
  });

  it.each(["loss=0.25", "metric name=loss::1", " ::metric name=loss::1", "::metrics name=loss::1", "::metricname=loss::1", "echo ::metric name=loss::1", ""])(
    "ordinary output: %j",
    (line) => {
      expect(parseMetricLine(line)).toBeNull();
    },
  );

  it.each([
    ["::metric name=loss", /expected/],
    ["::metric name=loss::", /finite number/],
    ["::metric name=loss::abc", /finite number/],
    ["::metric name=loss::1e999", /finite number/],
    ["::metric name=loss::NaN", /finite number/],
    ["::metric name=loss,step=-1::1", /step/],
    ["::metric name=loss,step=1.5::1", /step/],
    ["::metric name=loss,epoch=1::1", /unknown property/],
    ["::metric step=1::1", /needs a name/],
    ["::metric name= loss!::1", /invalid metric name/],
    ["::metric name=a\tb::1", /invalid metric name/],
    ["::metric::{not json", /not JSON/],
    ["::metric::[1]", /JSON object/],
    ['::metric::{"name":"x","value":true}', /finite number/],
    ['::metric::{"name":"x","value":1,"step":"x"}', /step/],
    ['::metric::{"metrics":{"a":null}}', /not a finite number/],
    ['::metric::{"metrics":[1]}', /object of name/],
  ])("refused: %s", (line, reason) => {
    const parsed = parseMetricLine(line);
    expect(parsed && "error" in parsed ? parsed.error : parsed).toMatch(reason);
  });
});

describe("metrics-file records", () => {
  it.each([
    ['{"name":"loss","value":1,"step":0}', { records: [{ name: "loss", value: 1, step: 0 }] }],
    [
      '{"metrics":{"a":1,"b":2}}',
      {
        records: [
          { name: "a", value: 1 },
          { name: "b", value: 2 },
        ],
      },
    ],
    ['{"metrics":{}}', { records: [] }],
    ["::metric name=a::1", { error: "not JSON" }],
    ['{"name":"","value":1}', { error: "a metric needs a name" }],
  ])("%s", (text, expected) => {
    expect(parseMetricRecord(text)).toEqual(expected);
  });
});
