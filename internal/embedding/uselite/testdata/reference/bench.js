// Times the JavaScript runtime (@energetic-ai/embeddings on TF.js, wasm backend) on the sentences the Go
// benchmarks use, so that `make bench-embeddings` prints both from the same run on the same machine.
//
// Usage: node bench.js WEIGHTS_DIR ROUTING_JSON
// Prints: model load time; latency of one 20-word sentence (bench.json), one call at a time; throughput over
// the routing set's queries embedded as one batch; resident memory with the model loaded.
"use strict";
const fs = require("fs");
const path = require("path");
const core = require("@energetic-ai/core");
const { initModel } = require("@energetic-ai/embeddings");

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function main() {
  const [weightsDir, routingFile] = process.argv.slice(2);
  if (!weightsDir || !routingFile) throw new Error("usage: node bench.js WEIGHTS_DIR ROUTING_JSON");
  const single = JSON.parse(fs.readFileSync(path.join(__dirname, "bench.json"), "utf-8")).single;
  const queries = JSON.parse(fs.readFileSync(routingFile, "utf-8")).queries.map((q) => q.text);

  let t0 = process.hrtime.bigint();
  const model = await initModel(async () => ({
    model: await core.loadGraphModel(`file://${path.resolve(weightsDir)}/model.json`),
    vocabulary: JSON.parse(fs.readFileSync(path.join(weightsDir, "vocab.json"), "utf-8")),
  }));
  const load = ms(t0);
  await model.embed([single]); // warm up: the first call compiles kernels
  const rss = process.memoryUsage().rss / (1 << 20);

  const runs = 100;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await model.embed([single]);
  const latency = ms(t0) / runs;

  const rounds = 5;
  await model.embed(queries);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await model.embed(queries);
  const batch = ms(t0) / rounds;

  const env = core.env();
  console.log(`backend ${core.getBackend()} (tfjs ${core.version["tfjs-core"]}, SIMD ${env.getBool("WASM_HAS_SIMD_SUPPORT")}, ` +
    `threads ${env.getBool("WASM_HAS_MULTITHREAD_SUPPORT")}), node ${process.version}`);
  console.log(`load                  ${load.toFixed(0)} ms`);
  console.log(`one 20-word sentence  ${latency.toFixed(2)} ms/op (mean of ${runs})`);
  console.log(`batch of ${queries.length} queries  ${batch.toFixed(0)} ms, ${(queries.length / (batch / 1000)).toFixed(0)} sentences/s`);
  console.log(`resident memory       ${rss.toFixed(0)} MiB with the model loaded`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
