// Prompt-processing and generation speed of llama.cpp (through npm node-llama-cpp@3.21.1, CPU,
// 2 threads unless THREADS says otherwise) on the workload of backends/gguf's BenchmarkPromptProcessing / BenchmarkGeneration:
// pp = a 128-token prompt from an empty cache; tg = 112 greedy tokens after a 16-token prompt.
// Usage: [THREADS=2] node bench_node_llama_cpp.mjs MODEL.gguf [MODEL.gguf ...]
import {getLlama} from "node-llama-cpp";

const TEXT = "Once upon a time, Tom had a red cat. The cat sat on the mat. One day the cat saw a dog. Selamat pagi, apa khabar? " +
  "Saya suka makan nasi lemak. Question: What is the capital of France?\nAnswer: Paris\nQuestion: What is 12 plus 7?\n" +
  "Answer: 19\nCount: 2, 4, 6, 8, 10, 12\nThe opposite of hot is cold. The capital of Egypt is Cairo. " +
  "Anna and the fox went home and they were happy.";
const llama = await getLlama({gpu: false, build: "never"});
for (const path of process.argv.slice(2)) {
  const model = await llama.loadModel({modelPath: path});
  const ctx = await model.createContext({contextSize: 1024, threads: Number(process.env.THREADS || 2), batchSize: 512, flashAttention: true});
  const seq = ctx.getSequence();
  let toks = [model.tokens.bos, ...model.tokenize(TEXT, true)];
  while (toks.length < 128) toks = toks.concat(toks.slice(1));
  toks = toks.slice(0, 128);
  const pp = [], tg = [];
  for (let r = 0; r < 4; r++) {
    await seq.clearHistory();
    let t0 = performance.now();
    await seq.controlledEvaluate(toks);
    pp.push(128 / ((performance.now() - t0) / 1000));
    await seq.clearHistory();
    // Greedy decoding; the clock starts at the first generated token, after the prompt.
    let n = 0;
    for await (const t of seq.evaluate(toks.slice(0, 16), {temperature: 0})) {
      if (n === 0) t0 = performance.now();
      if (++n > 112) break;
    }
    tg.push(112 / ((performance.now() - t0) / 1000));
  }
  const med = (a) => a.slice(1).sort((x, y) => x - y)[1];
  console.log(`${path}\tpp128 ${med(pp).toFixed(1)} tokens/s\ttg ${med(tg).toFixed(1)} tokens/s`);
  await ctx.dispose();
  await model.dispose();
}
