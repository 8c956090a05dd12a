// Command benchpipeline measures how busy a run keeps the model server. It
// puts a proxy in front of an OpenAI-compatible server (llama-server) that
// holds every completion or chat request -hold longer, a stand-in for a
// bigger model, and serves at most -slots of them at once (the server's
// slots; requests beyond them queue in the proxy); tokenize and every other
// call pass untouched. Then, for each glossobench binary given as
// LABEL=PATH, it runs the quick start with model.spec pointing at the proxy
// and model.concurrency -slots (or -concurrency), on a Temporal dev server of that binary's
// own, and prints side by side the occupancy (the mean number of occupied
// slots ÷ slots, over the span from the first completion request in to the
// last one out) and the busy share (of that span, the time with at least
// one request being served). With -upstream fake the proxy forwards to an
// instant server of its own in vLLM's shapes instead, so every idle slot is
// the harness's; -timeline writes each run's requests and activities on one
// clock, to see where the slots go idle. Usage:
//
//	go run ./cmd/benchpipeline -upstream http://127.0.0.1:8080 base=bin/gb-base head=bin/gb
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"
)

func main() {
	upstream := flag.String("upstream", os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL"), `the model server (default $GLOSSOBENCH_LLAMA_SERVER_URL); "fake": an instant one in vLLM's shapes, so the slots' idle time is all the harness's`)
	hold := flag.Duration("hold", 200*time.Millisecond, "extra time each completion or chat request is held")
	slots := flag.Int("slots", 8, "requests served at once (the server's slots)")
	concurrency := flag.Int("concurrency", 0, "model.concurrency of the runs (default -slots); above -slots the server keeps a queue")
	cfgPath := flag.String("config", "testdata/quickstart.yaml", "the run config; its model.spec is replaced by the proxy")
	timeline := flag.String("timeline", "", "write each run's completion requests (start and end in seconds from the first one in, and path) to FILE-LABEL.csv and its activities (from its histories, on the same clock) to FILE-LABEL-activities.csv, to see where the slots go idle")
	keep := flag.Bool("keep", false, "keep each run's folder (store, Temporal database, log) and print its path")
	flag.Parse()
	if *upstream == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchpipeline -upstream URL LABEL=GLOSSOBENCH_BINARY...")
		os.Exit(2)
	}
	var labels []string
	var results []stats
	for _, arg := range flag.Args() {
		label, bin, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "benchpipeline: %q: want LABEL=PATH\n", arg)
			os.Exit(2)
		}
		s, err := measure(*upstream, *hold, *slots, cmp.Or(*concurrency, *slots), *cfgPath, bin, *keep, *timeline != "")
		if err == nil && *timeline != "" {
			err = writeTimeline(fmt.Sprintf("%s-%s.csv", *timeline, label), s.intervals)
		}
		if err == nil && *timeline != "" {
			err = writeActivities(fmt.Sprintf("%s-%s-activities.csv", *timeline, label), s.intervals[0].start, s.activities)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchpipeline: %s: %v\n", label, err)
			os.Exit(1)
		}
		labels, results = append(labels, label), append(results, s)
	}
	print(os.Stdout, labels, results, *hold, *slots)
}

// interval is one request's time in a slot.
type interval struct {
	arrived    time.Time // at the proxy, before waiting for a slot
	start, end time.Time
	path       string
}

// proxy holds completion and chat requests and records their slot time.
type proxy struct {
	rp    http.Handler // the upstream
	hold  time.Duration
	slots chan struct{}

	mu   sync.Mutex
	done []interval
}

func newProxy(upstream string, hold time.Duration, slots int) (*proxy, error) {
	p := &proxy{rp: fakeServer{}, hold: hold, slots: make(chan struct{}, slots)}
	if upstream != "fake" {
		u, err := url.Parse(upstream)
		if err != nil {
			return nil, err
		}
		p.rp = httputil.NewSingleHostReverseProxy(u)
	}
	return p, nil
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// llama-server's own /completion is a completion request too.
	if !strings.HasSuffix(r.URL.Path, "/completions") && !strings.HasSuffix(r.URL.Path, "/completion") {
		p.rp.ServeHTTP(w, r) // tokenize, models, health: untouched
		return
	}
	arrived := time.Now()
	p.slots <- struct{}{}
	start := time.Now()
	time.Sleep(p.hold)
	p.rp.ServeHTTP(w, r)
	end := time.Now()
	<-p.slots
	p.mu.Lock()
	p.done = append(p.done, interval{arrived, start, end, r.URL.Path})
	p.mu.Unlock()
}

// stats is what one run made of the slots.
type stats struct {
	requests   int
	span       time.Duration // first request in to last one out
	occupied   time.Duration // summed over requests
	busy       time.Duration // with at least one request in
	wall       time.Duration // the whole glossobench run command
	occupancy  float64
	busyShare  float64
	intervals  []interval // sorted by start
	activities []activitySpan
}

func summarize(iv []interval, slots int) stats {
	s := stats{requests: len(iv), intervals: iv}
	if len(iv) == 0 {
		return s
	}
	slices.SortFunc(iv, func(a, b interval) int { return a.start.Compare(b.start) })
	first, last := iv[0].start, iv[0].end
	cur := iv[0]
	for _, x := range iv {
		s.occupied += x.end.Sub(x.start)
		if x.end.After(last) {
			last = x.end
		}
		switch {
		case x.start.After(cur.end):
			s.busy += cur.end.Sub(cur.start)
			cur = x
		case x.end.After(cur.end):
			cur.end = x.end
		}
	}
	s.busy += cur.end.Sub(cur.start)
	s.span = last.Sub(first)
	s.occupancy = s.occupied.Seconds() / (float64(slots) * s.span.Seconds())
	s.busyShare = s.busy.Seconds() / s.span.Seconds()
	return s
}

// measure runs the quick start with binary bin against the proxy.
func measure(upstream string, hold time.Duration, slots, concurrency int, cfgPath, bin string, keep, withActivities bool) (stats, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return stats{}, err
	}
	p, err := newProxy(upstream, hold, slots)
	if err != nil {
		return stats{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return stats{}, err
	}
	srv := &http.Server{Handler: p}
	go srv.Serve(ln)
	defer srv.Close()

	dir, err := os.MkdirTemp("", "benchpipeline-")
	if err != nil {
		return stats{}, err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "benchpipeline: %s: run folder %s\n", bin, dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cfg, err := writeConfig(cfgPath, dir, "openai:http://"+ln.Addr().String(), concurrency)
	if err != nil {
		return stats{}, err
	}

	// A Temporal dev server of the binary's own, with its worker: nothing
	// else's runs or workers share it.
	port, err := freePort()
	if err != nil {
		return stats{}, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logf, err := os.Create(filepath.Join(dir, "dev.log"))
	if err != nil {
		return stats{}, err
	}
	defer logf.Close()
	dev := exec.Command(bin, "dev", "--port", fmt.Sprint(port), "--ui-port", "-1", "--dir", filepath.Join(dir, "temporal"))
	dev.Stdout, dev.Stderr = logf, logf
	if err := dev.Start(); err != nil {
		return stats{}, err
	}
	defer func() { dev.Process.Kill(); dev.Wait() }()
	if err := waitListening(addr, 2*time.Minute); err != nil {
		return stats{}, fmt.Errorf("dev server: %v (log %s)", err, logf.Name())
	}

	run := exec.Command(bin, "run", "--config", cfg, "--skip-preflight")
	run.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+addr, "TEMPORAL_NAMESPACE=default")
	var out strings.Builder
	run.Stdout, run.Stderr = &out, &out
	start := time.Now()
	if err := run.Run(); err != nil {
		return stats{}, fmt.Errorf("run: %v\n%s", err, tail(out.String(), 3000))
	}
	wall := time.Since(start)
	p.mu.Lock()
	s := summarize(p.done, slots)
	p.mu.Unlock()
	s.wall = wall
	if s.requests == 0 {
		return stats{}, fmt.Errorf("no completion request reached the proxy\n%s", tail(out.String(), 3000))
	}
	if withActivities {
		if s.activities, err = runActivities(addr); err != nil {
			return stats{}, fmt.Errorf("reading the run's histories: %v", err)
		}
	}
	return s, nil
}

// writeConfig writes the config at path into dir with model.spec and
// model.concurrency replaced and the store in dir; the config's folder is
// linked entry by entry into dir, so its relative paths still resolve.
func writeConfig(path, dir, spec string, concurrency int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	model, _ := cfg["model"].(map[string]any)
	if model == nil {
		return "", fmt.Errorf("%s: no model section", path)
	}
	model["spec"], model["concurrency"] = spec, concurrency
	delete(model, "chat_format") // a gguf-only setting
	cfg["store"] = map[string]any{"uri": filepath.Join(dir, "store")}
	src, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return "", err
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, "bench-"+filepath.Base(path))
	return name, os.WriteFile(name, out, 0o644)
}

// writeTimeline writes the requests' slot intervals as CSV, in seconds from
// the first request in (whose time a comment line gives, to set beside the
// run's history).
func writeTimeline(path string, iv []interval) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# first request in at %s\nstart_s,end_s,path,arrived_s\n", iv[0].start.UTC().Format(time.RFC3339Nano))
	for _, x := range iv {
		t0 := iv[0].start
		fmt.Fprintf(&b, "%.3f,%.3f,%s,%.3f\n", x.start.Sub(t0).Seconds(), x.end.Sub(t0).Seconds(), x.path, x.arrived.Sub(t0).Seconds())
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, patience time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			// The frontend listens before the namespace is ready.
			time.Sleep(3 * time.Second)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening after %s", addr, patience)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func print(w io.Writer, labels []string, res []stats, hold time.Duration, slots int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(stats) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, s := range res {
			fmt.Fprintf(tw, "%s\t", f(s))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\t")
	for _, l := range labels {
		fmt.Fprintf(tw, "%s\t", l)
	}
	fmt.Fprintln(tw)
	row("completion requests", func(s stats) string { return fmt.Sprint(s.requests) })
	row("span, first in to last out (s)", func(s stats) string { return fmt.Sprintf("%.1f", s.span.Seconds()) })
	row(fmt.Sprintf("%d slots need (s)", slots), func(s stats) string {
		return fmt.Sprintf("%.1f", float64(s.requests)*hold.Seconds()/float64(slots))
	})
	row(fmt.Sprintf("occupancy (mean slots in use ÷ %d)", slots), func(s stats) string { return fmt.Sprintf("%.2f", s.occupancy) })
	row("busy (share of span)", func(s stats) string { return fmt.Sprintf("%.2f", s.busyShare) })
	row("run command wall (s)", func(s stats) string { return fmt.Sprintf("%.1f", s.wall.Seconds()) })
	tw.Flush()
}
