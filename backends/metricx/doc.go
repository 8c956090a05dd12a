// Package metricx is a client for MetricX-24 (google-research/metricx)
// served over HTTP with Hugging Face text-embeddings-inference's /predict
// protocol. It registers the spec family "tei" with the NLG axis
// (scorers/nlg), so a config turns MetricX-24 on with
//
//	axes:
//	  nlg:
//	    options:
//	      metricx: tei+http://gpu-host:8080?mode=hybrid&api_key_env=METRICX_API_KEY
//
// Spec options (all optional; an unknown one is an error):
//
//	mode=hybrid|qe     hybrid (default): source, candidate and reference; qe: no reference
//	api_key_env=NAME   environment variable holding the key, sent as "Authorization: Bearer"
//	batch_size=N       inputs per request, default 32 (TEI's default --max-client-batch-size)
//	concurrency=N      requests in flight, default 2
//	timeout=DURATION   per request, default 120s
//	max_retries=N      retries after the first attempt, default 4; 0 for none
//
// Nothing is contacted until the first Score: a configured metric that is
// never used costs nothing, and a server that cannot be reached becomes a
// note on the NLG axis (naming the URL) while chrF++ is still reported.
//
// # Input and scores
//
// The text sent for each segment is exactly what metricx24/predict.py's
// _make_input builds (google-research/metricx, commit 0be34b4):
//
//	hybrid: "source: " + source + " candidate: " + hypothesis + " reference: " + reference
//	qe:     "source: " + source + " candidate: " + hypothesis
//
// with no trimming or normalisation. MetricX-24 models are all hybrid, so
// the same weights serve both modes; the QE input drops the reference
// field entirely, as predict.py --qe does. The server must tokenize as
// predict.py does: the mT5 tokenizer, truncation at 1536 tokens (the
// models' training length) and the trailing </s> removed.
//
// The answer is an error score, lower is better, in [0, 25]: the official
// MT5ForRegression clamps its output there (the README: "the metric scores
// get automatically clipped at 0 and 25"). The client clamps again, so a
// server that returns the raw regression logit still yields the official
// number; NaN or infinite scores are an error. The NLG axis reports the mean
// score and SEA-HELM's normalisation (25 − x) / 25.
//
// # Serving the model
//
// The real weights are not run in this repository's CI: MetricX-24 is an
// mT5 encoder-decoder of 1.2B (Large), 3.7B (XL) or 13B (XXL) parameters.
// The tests use an httptest server that speaks /predict.
//
// Stock text-embeddings-inference cannot load MetricX-24: its sequence
// classification support covers encoder models (BERT, XLM-RoBERTa, …), and
// MetricX-24 is a custom class (MT5ForRegression) that runs one decoder
// step and reads the logit of <extra_id_10>. Serve it behind the same
// protocol instead, with a small server around the official code:
//
//  1. load the tokenizer (google/mt5-xl; all mT5 sizes share one vocabulary)
//     and metricx24.models.MT5ForRegression.from_pretrained on
//     google/metricx-24-hybrid-{large,xl,xxl}-v2p6, in eval mode on a GPU;
//  2. answer POST /predict {"inputs": [["TEXT"], ...], "truncate": true,
//     "raw_scores": true} by tokenizing each TEXT as above, padding the
//     batch, running the model and replying [[{"score": S, "label":
//     "metricx24"}], ...], one single-element list per input, in order;
//  3. refuse requests without "Authorization: Bearer $KEY" when a key is set,
//     and answer 413 when a batch is larger than it accepts (the client then
//     halves the batch), 429 or 503 when overloaded (the client retries).
//
// Any server that speaks this protocol works, including a text-embeddings-
// inference container serving a regression model with one label (the
// client sends raw_scores so that TEI does not apply a sigmoid).
//
// vLLM's /classify is not supported: vLLM cannot load MT5ForRegression
// either, and the request field that turns off its activation has been
// renamed across releases, so a client could silently receive squashed
// scores.
//
// Requests are retried with exponential backoff and full jitter on 429,
// 5xx (except 501), timeouts and refused or reset connections, honouring
// Retry-After, by the client backends/openai uses too
// (backends/internal/httpjson). An outage that outlasts the retries is
// still reported as a temporary net.Error, so a caller can try again later
// instead of taking it as the answer. The API key never enters the spec,
// the config or an error message.
package metricx
