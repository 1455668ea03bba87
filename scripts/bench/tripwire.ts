import { judgeTurn, type TurnRun } from "../../src/core/runner/decisions.ts";
import { checkTripwire, completedCalls, type GateReport } from "../../src/core/runner/tripwire.ts";

/**
 * The tripwire's cost per turn: reading a turn's completed calls off Claude Code's stream-json and
 * matching them with the gate's reports, against judgeTurn() on the same stream (which the runner
 * did before the tripwire). Two turns: a typical one (40 calls, 4 KiB results) and a heavy one
 * (400 calls, 64 KiB results, about 26 MiB of stream). Aim: under 5 ms for the typical turn.
 */
export async function run(): Promise<void> {
  for (const [label, calls, resultBytes] of [
    ["typical turn: 40 calls, 4 KiB results", 40, 4 * 1024],
    ["heavy turn: 400 calls, 64 KiB results", 400, 64 * 1024],
  ] as const) {
    const { stdout, reports } = turnOf(calls, resultBytes);
    const run: TurnRun = { code: 0, signal: null, timedOut: false, stdout, marker: false, overCap: null };
    const spec = { stream: "claude-stream-json" as const, typedTools: [] };
    const rounds = calls > 100 ? 9 : 51;
    const wire: number[] = [];
    const judge: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      const v = checkTripwire(spec, completedCalls(spec.stream, stdout), reports);
      wire.push(performance.now() - t);
      if (v.kind !== "ok" || v.calls !== calls) throw new Error(`the tripwire tripped: ${JSON.stringify(v)}`);
      t = performance.now();
      judgeTurn({ kind: "result-line", emptyOutputFails: true, why: "" }, run, 900);
      judge.push(performance.now() - t);
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `${label} (${(stdout.length / 1024 / 1024).toFixed(1)} MiB): tripwire ${med(wire).toFixed(2)} ms, judgeTurn ${med(judge).toFixed(2)} ms (${(med(wire) / med(judge)).toFixed(2)}x), medians of ${rounds}`,
    );
  }
}

function turnOf(calls: number, resultBytes: number): { stdout: string; reports: GateReport[] } {
  const lines: string[] = [JSON.stringify({ type: "system", subtype: "init", tools: ["Read", "Bash"] })];
  const reports: GateReport[] = [];
  const body = "x".repeat(resultBytes);
  for (let i = 0; i < calls; i++) {
    const id = `toolu_${String(i).padStart(20, "0")}`;
    const name = i % 2 === 0 ? "Read" : "Bash";
    lines.push(
      JSON.stringify({
        type: "assistant",
        message: { role: "assistant", content: [{ type: "tool_use", id, name, input: { file_path: `/ws/f${i}` } }] },
      }),
      JSON.stringify({
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: body }] },
      }),
    );
    reports.push({ call: id, tool: name, allow: true, digest: "0".repeat(64) });
  }
  lines.push(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "done" }));
  return { stdout: lines.join("\n") + "\n", reports };
}
