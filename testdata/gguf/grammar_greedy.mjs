// Greedy completions under a GBNF grammar by llama.cpp's own grammar sampler (npm node-llama-cpp@3.21.1,
// its prebuilt CPU binaries), for backends/gguf's TestGrammarMatchesNodeLlamaCpp: each prompt is run
// from a fresh sequence as BOS + tokenize(prompt), temperature 0, at most N tokens.
// Usage: NODE_LLAMA_CPP=/path/to/node_modules/node-llama-cpp/dist/index.js \
//        node grammar_greedy.mjs MODEL.gguf GRAMMAR.gbnf PROMPTS.json N     (prints a JSON array of texts)
import fs from "node:fs";

const {getLlama, LlamaCompletion} = await import(process.env.NODE_LLAMA_CPP || "node-llama-cpp");
const [modelPath, grammarPath, promptsPath, n] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath});
const ctx = await model.createContext({contextSize: 512, threads: 1});
const grammarText = fs.readFileSync(grammarPath, "utf8");
const out = [];
for (const p of JSON.parse(fs.readFileSync(promptsPath, "utf8"))) {
  const seq = ctx.getSequence();
  const completion = new LlamaCompletion({contextSequence: seq});
  const grammar = await llama.createGrammar({grammar: grammarText});
  out.push(await completion.generateCompletion([model.tokens.bos, ...model.tokenize(p)], {grammar, maxTokens: Number(n), temperature: 0}));
  seq.dispose();
}
console.log(JSON.stringify(out));
