#!/usr/bin/env bash
# Records real llama-server answers (node-llama-cpp 3.21.1's llama.cpp,
# serving /work/shared/models/tiny-llama/tiny-llama.gguf) that
# backends/openai's TestRecordedLlamaServer parses offline.
# Usage: record.sh http://127.0.0.1:18081
set -euo pipefail
url=${1:?server URL}
cd "$(dirname "$0")"
P='[1,352,452,349,299,262,361,320,426,484,438,428,432,287,460,13,455,432,348,452]'
curl -sf "$url/tokenize" -d '{"content":"Question: What is the capital of France?\nAnswer: Café","add_special":true,"with_pieces":true}' >tokenize_pieces.json
curl -sf "$url/completion" -d "{\"prompt\":$P,\"n_predict\":4,\"n_probs\":1,\"post_sampling_probs\":false,\"grammar\":\"root ::= <[426]> <[480]> <[431]> <[273]>\",\"temperature\":0,\"seed\":0,\"cache_prompt\":false,\"stream\":false,\"response_fields\":[\"content\",\"completion_probabilities\",\"stop_type\"]}" >completion_forced_rome.json
# Top-k probe before the byte token 0xA9 (id 172) of "é", after " Caf" + 0xC3.
curl -sf "$url/completion" -d "{\"prompt\":${P%]},368,428,446,198],\"n_predict\":1,\"n_probs\":8,\"post_sampling_probs\":false,\"grammar\":\"root ::= [a-zA-Z0-9]\",\"temperature\":0,\"seed\":0,\"cache_prompt\":false,\"stream\":false,\"response_fields\":[\"content\",\"completion_probabilities\"]}" >completion_probe.json
