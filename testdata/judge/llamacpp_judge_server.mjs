// A minimal OpenAI-compatible /v1/chat/completions server on llama.cpp (npm node-llama-cpp@3.21.1, CPU),
// used to check scorers/judge's constrained output against a real llama.cpp JSON-schema grammar when no
// llama-server binary is available: response_format.json_schema.schema (or llama-server's json_schema
// field) becomes a grammar with llama.createGrammarForJsonSchema, the chat is rendered with the tiny
// model's qa.jinja template (system messages are dropped: the template has no system role), and the
// completion is greedy.
// Usage: NODE_LLAMA_CPP=/path/to/node_modules/node-llama-cpp/dist/index.js node llamacpp_judge_server.mjs MODEL.gguf PORT
// Then: GLOSSOBENCH_LLAMA_SERVER_URL=http://127.0.0.1:PORT go test -run LlamaServer ./scorers/judge
import http from "node:http";

const mod = await import(process.env.NODE_LLAMA_CPP || "node-llama-cpp");
const {getLlama, LlamaCompletion} = mod;
const [modelPath, port] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath});
const ctx = await model.createContext({contextSize: 2048, threads: 1});
const completion = new LlamaCompletion({contextSequence: ctx.getSequence()});

function render(messages) {
  let s = "";
  for (const m of messages) {
    if (m.role === "user") s += `Question: ${m.content}\nAnswer:`;
    else if (m.role === "assistant") s += ` ${m.content}\n`;
  }
  return s;
}

let queue = Promise.resolve();
http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end("not found");
      return;
    }
    queue = queue.then(async () => {
      try {
        const b = JSON.parse(body);
        const schema = b.json_schema || b.response_format?.json_schema?.schema;
        const grammar = schema ? await llama.createGrammarForJsonSchema(schema) : undefined;
        await completion.contextSequence?.clearHistory?.();
        let prompt = render(b.messages || []);
        // Keep the prompt within the context, dropping its oldest tokens.
        const toks = model.tokenize(prompt);
        const room = 2048 - (b.max_tokens || 256) - 8;
        if (toks.length > room) prompt = model.detokenize(toks.slice(toks.length - room));
        let finish = "stop";
        const text = await completion.generateCompletion(prompt, {
          grammar, maxTokens: b.max_tokens || 256, temperature: 0,
          onToken: () => {},
        });
        const n = model.tokenize(text).length;
        if (n >= (b.max_tokens || 256)) finish = "length";
        res.writeHead(200, {"Content-Type": "application/json"});
        res.end(JSON.stringify({choices: [{index: 0, message: {role: "assistant", content: text}, finish_reason: finish}], usage: {completion_tokens: n}}));
      } catch (e) {
        res.writeHead(500, {"Content-Type": "application/json"});
        res.end(JSON.stringify({error: {message: String(e)}}));
      }
    });
  });
}).listen(Number(port), "127.0.0.1", () => console.log(`listening on ${port}`));
