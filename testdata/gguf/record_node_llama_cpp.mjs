// Record llama.cpp reference values for backends/gguf tests through node-llama-cpp
// (npm node-llama-cpp@3.21.1 with its prebuilt @node-llama-cpp/linux-x64 binary: the same
// llama.cpp release whose llama-server ../shared/tools/build-llama-server.sh builds).
// It writes the same files, in the same format, as record_llama_server.py:
//   tokenize.jsonl  llama_tokenize(add_special, parse_special=true), as llama-server's /tokenize
//   loglik.jsonl    per-token log-probabilities from the full next-token distribution
//   generate.jsonl  greedy completions
// Usage: cd somewhere && npm install node-llama-cpp@3.21.1 && node record_node_llama_cpp.mjs
import {getLlama} from "node-llama-cpp";
import {readFileSync, writeFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath: join(here, "../models/tiny-llama/tiny-llama.gguf")});
// Flash attention is what llama-server's default (auto) resolves to on CPU.
const ctx = await model.createContext({contextSize: 512, threads: 1, flashAttention: true});
const seq = ctx.getSequence();
const BOS = model.tokens.bos;

// /tokenize: add_special puts BOS first for this SPM vocabulary (add_bos_token true, add_eos_token false).
const tokenize = (text, bos) => {
  const t = text === "" ? [] : Array.from(model.tokenize(text, true));
  return bos ? [BOS, ...t] : t;
};

const texts = readFileSync(join(here, "strings.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).text);
writeFileSync(join(here, "tokenize.jsonl"),
  texts.map((t) => JSON.stringify({text: t, bos: tokenize(t, true), nobos: tokenize(t, false)})).join("\n") + "\n");

const Q = (c) => `Question: What is the capital of ${c}?\nAnswer:`;
const PAIRS = [[Q("France"), " Paris"], [Q("France"), " Rome"], [Q("France"), " Berlin"],
  [Q("France"), " Madrid"], [Q("Italy"), " Rome"], [Q("Japan"), " Tokyo"],
  [Q("Japan"), " Paris"], [Q("Kenya"), " Nairobi"], [Q("Malaysia"), " Kuala Lumpur"],
  ["Question: What is 2 plus 3?\nAnswer:", " 5"], ["Question: What is 2 plus 3?\nAnswer:", " 6"],
  ["Question: What is 12 plus 7?\nAnswer:", " 19"], ["Question: What is the opposite of hot?\nAnswer:", " cold"],
  ["Question: What is the opposite of hot?\nAnswer:", " big"], ["3 + 4 =", " 7"], ["Count: 2, 4, 6, 8,", " 10, 12"],
  ["Once upon a time, Tom had a red cat.", " The cat sat on the mat."],
  ["The capital of Egypt is", " Cairo."], ["", "Hello world"], ["", "Question:"],
  ["Ibu negara Malaysia ialah", " Kuala Lumpur."], ["Saya suka makan", " nasi lemak 🍛"],
  ["Indonesia adalah negara", " kepulauan terbesar di dunia."], ["Soalan: Apakah 2 tambah 2?\nJawapan:", " 4"],
  ["A  B\t C", "\n\n  D"], ["Numbers: 1234567890", " and 3.14159"],
  ["The opposite of big is", " small.\nThe opposite of fast is slow."],
  ["Question: What is the capital of Spain?\nAnswer: Madrid\nQuestion: What is the capital of Peru?\nAnswer:", " Lima"]];

const lines = [];
for (const [c, k] of PAIRS) {
  const whole = tokenize(c + k, true);
  const n = tokenize(c, true).length;
  await seq.clearHistory();
  const input = whole.map((t, i) => (i >= n - 1 && i < whole.length - 1) ? [t, {generateNext: {probabilities: true}}] : t);
  const out = await seq.controlledEvaluate(input);
  const lps = [];
  let greedy = true;
  for (let i = n - 1; i < whole.length - 1; i++) {
    const p = out[i].next.probabilities;
    lps.push(Math.log(p.get(whole[i + 1])));
    greedy = greedy && p.entries().next().value[0] === whole[i + 1];
  }
  lines.push(JSON.stringify({context: c, continuation: k, tokens: whole.slice(n), token_logprobs: lps,
    logprob: lps.reduce((a, b) => a + b, 0), is_greedy: greedy}));
}
writeFileSync(join(here, "loglik.jsonl"), lines.join("\n") + "\n");

const PROMPTS = [Q("France"), Q("Germany"), "Question: What is 5 plus 9?\nAnswer:", "Once upon a time,",
  "The opposite of up is", "Count: 3, 6, 9,", "Selamat pagi", ""];
const gens = [];
for (const p of PROMPTS) {
  await seq.clearHistory();
  const prompt = tokenize(p, true);
  const gen = [];
  for await (const t of seq.evaluate(prompt, {temperature: 0})) {
    if (model.isEogToken(t)) break;
    gen.push(t);
    if (gen.length >= 24) break;
  }
  // llama-server's content is the generated tokens' pieces; detokenizing after the prompt keeps their spaces.
  const content = model.detokenize([...prompt, ...gen]).slice(model.detokenize(prompt).length);
  gens.push(JSON.stringify({prompt: p, n_predict: 24, content, tokens: gen}));
}
writeFileSync(join(here, "generate.jsonl"), gens.join("\n") + "\n");
console.log(`recorded ${texts.length} tokenizations, ${PAIRS.length} log-likelihoods, ${PROMPTS.length} generations`);
