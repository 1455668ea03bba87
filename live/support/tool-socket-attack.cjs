// Garbage on the runner's tool socket, from inside a session: the issue 18 finding's 20,000-deep
// request, a 1,000-deep one, a long line with no newline, 200 connections at once, and bytes that
// are not JSON. Prints one JSON object: the first answer line to each (or "(no answer)") and how
// many of the 200 connections were refused by the connections bound.
// `node tool-socket-attack.cjs <tools.sock> <long line bytes>`
const net = require("node:net");

const [sock, longBytes] = process.argv.slice(2);

/**
 * One connection: the chunks written in order, then the first answer line; "(no answer)" when none
 * came within waitMs, or within afterMs of the last chunk's being taken.
 */
function send(chunks, waitMs = 10000, afterMs = waitMs) {
  return new Promise((resolve) => {
    let buf = "";
    let settled = false;
    const c = net.connect(sock);
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      c.destroy();
      const nl = buf.indexOf("\n");
      resolve(nl === -1 ? "(no answer)" : buf.slice(0, nl));
    };
    const timer = setTimeout(done, waitMs);
    c.setEncoding("utf8");
    c.on("error", done);
    c.on("close", done);
    c.on("data", (d) => {
      buf += d;
      if (buf.includes("\n")) done();
    });
    c.on("connect", async () => {
      for (const chunk of chunks) {
        if (settled) return;
        if (!c.write(chunk)) await new Promise((ok) => c.once("drain", ok));
      }
      await new Promise((ok) => c.write("", ok));
      setTimeout(done, afterMs);
    });
  });
}

/** n connections held open at once, each with half a request; how many the server refused. */
async function many(n) {
  const held = [];
  let refused = 0;
  await Promise.all(Array.from({ length: n }, () => new Promise((ok) => {
    const c = net.connect(sock);
    held.push(c);
    c.setEncoding("utf8");
    c.on("error", ok);
    c.on("close", ok);
    c.on("data", (d) => {
      if (d.includes("connections bound")) refused++;
    });
    c.on("connect", () => c.write('{"tool":'));
    setTimeout(ok, 1500);
  })));
  for (const c of held) c.destroy();
  // The server sees the hang-ups a moment later.
  await new Promise((ok) => setTimeout(ok, 300));
  return refused;
}

const nested = (depth) => `{"id":${depth},"tool":"send_message","args":{"to":"pm-deep","body":${"[".repeat(depth)}${"]".repeat(depth)}}}\n`;

(async () => {
  const out = {};
  out.deep20000 = await send([nested(20000)]);
  out.deep1000 = await send([nested(1000)]);
  out.long = await send([Buffer.alloc(Number(longBytes), 0x61)], 30000, 2000);
  out.refused = await many(200);
  out.garbage = await send([Buffer.from([0, 0xff, 0x0a, 0x7b, 0x22, 0x0a, 0x5d, 0x5d, 0x0a])]);
  process.stdout.write(JSON.stringify(out) + "\n");
})();
