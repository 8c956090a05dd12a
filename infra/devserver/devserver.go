// Package devserver embeds a real Temporal server (frontend, history, matching
// and worker services in one process, SQLite persistence in a file) and the
// Temporal Web UI, built on the server's public Go API. It is what
// `glossobench dev` and a `glossobench run` without TEMPORAL_ADDRESS start, so
// a newcomer installs nothing.
package devserver

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const clusterName = "active"

// Options configure the embedded server. Zero values pick the documented defaults.
type Options struct {
	DBFile    string // SQLite file; "" = in memory (state lost at exit)
	IP        string // default 127.0.0.1
	Port      int    // frontend gRPC port, default 7233; -1 = any free port
	UIPort    int    // Web UI port, default 8233; -1 = no UI
	Namespace string // default "default"
	LogFile   string // server log file; "" = discard
	// SearchAttributes are registered on the namespace when the database is created.
	SearchAttributes map[string]enumspb.IndexedValueType
}

// Server is a running embedded Temporal server.
type Server struct {
	server    temporal.Server
	ui        *uiserver.Server
	Address   string // frontend host:port
	UIURL     string // "" when the UI is off
	Namespace string
}

// Start starts the server and returns once its frontend accepts connections.
func Start(opt Options) (*Server, error) {
	opt.IP = cmp.Or(opt.IP, "127.0.0.1")
	opt.Namespace = cmp.Or(opt.Namespace, "default")
	opt.Port = cmp.Or(opt.Port, 7233)
	opt.UIPort = cmp.Or(opt.UIPort, 8233)
	// A named port is checked before the database is touched: a second
	// server on the same file and port stops here (a chosen one FreePort
	// has just found free).
	if opt.Port > 0 {
		addr := net.JoinHostPort(opt.IP, strconv.Itoa(opt.Port))
		if ln, err := net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("temporal dev server: frontend address %s is not free (is another server running?): %w", addr, err)
		} else {
			ln.Close()
		}
	}
	sqlConf, err := sqlConfig(opt)
	if err != nil {
		return nil, err
	}
	logger := log.NewNoopLogger()
	var zl log.Logger = logger
	if opt.LogFile != "" {
		zl = log.NewZapLogger(log.BuildZapLogger(log.Config{Level: "warn", Format: "json", OutputFile: opt.LogFile}))
	}
	// Ports the server chooses itself are chosen again when one was taken
	// between choosing and binding it (another process's connection or
	// server); a port the caller named is not.
	attempts := 1
	if opt.Port < 0 {
		attempts = 3
	}
	for i := 1; ; i++ {
		s, err := start(opt, sqlConf, noExitLogger{zl})
		if err == nil || i == attempts || !errors.As(err, new(serverFatal)) {
			return s, err
		}
	}
}

// start starts the server once on the ports opt names, choosing the other
// services' ports; a Fatal of the server's is returned as a serverFatal.
func start(opt Options, sqlConf *config.SQL, zl log.Logger) (s *Server, err error) {
	var srv temporal.Server
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(serverFatal)
		if !ok {
			panic(r)
		}
		if s != nil && s.ui != nil {
			s.ui.Stop()
		}
		if srv != nil {
			stopQuietly(srv)
		}
		s, err = nil, f
	}()
	frontendPort := opt.Port
	if frontendPort < 0 {
		p, err := FreePort(opt.IP)
		if err != nil {
			return nil, err
		}
		frontendPort = p
	}
	addr := net.JoinHostPort(opt.IP, strconv.Itoa(frontendPort))
	conf, err := serverConfig(opt.IP, frontendPort, sqlConf)
	if err != nil {
		return nil, err
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("temporal dev server: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, zl)
	if err != nil {
		return nil, fmt.Errorf("temporal dev server: claim mapper: %w", err)
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for _, svc := range []primitives.ServiceName{primitives.FrontendService, primitives.HistoryService, primitives.MatchingService, primitives.WorkerService} {
		hosts[svc] = static.SingleLocalHost(net.JoinHostPort(opt.IP, strconv.Itoa(conf.Services[string(svc)].RPC.GRPCPort)))
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// Short-lived local runs: let workflows finish without long shutdown drains.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
	}
	srv, err = temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(zl),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal dev server: %w", err)
	}
	s = &Server{server: srv, Address: addr, Namespace: opt.Namespace}
	if opt.UIPort > 0 {
		s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			Host:                opt.IP,
			Port:                opt.UIPort,
			TemporalGRPCAddress: addr,
			EnableUI:            true,
			DefaultNamespace:    opt.Namespace,
			CORS:                uiconfig.CORS{CookieInsecure: true},
			HideLogs:            true,
			DisableNewsFetch:    true,
		}))
		s.UIURL = fmt.Sprintf("http://%s", net.JoinHostPort(opt.IP, strconv.Itoa(opt.UIPort)))
		go func() {
			// Start blocks until Stop; a failure (port taken) only loses the UI, not the run.
			if err := s.ui.Start(); err != nil && !errors.Is(err, errUIStopped) {
				fmt.Fprintf(os.Stderr, "temporal web ui: %v\n", err)
			}
		}()
	}
	if err := srv.Start(); err != nil {
		if s.ui != nil {
			s.ui.Stop()
		}
		return nil, fmt.Errorf("temporal dev server: start: %w", err)
	}
	if err := waitListening(addr, 30*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

var errUIStopped = errors.New("http: Server closed")

// Stop shuts the server down; the SQLite file keeps its state for the next start.
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.Stop()
	}
	s.server.Stop()
}

func sqlConfig(opt Options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if opt.DBFile == "" {
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = "glossobench-" + strconv.Itoa(os.Getpid())
	} else {
		dir := filepath.Dir(opt.DBFile)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("temporal dev server: database folder: %w", err)
		}
		conf.ConnectAttributes = map[string]string{"mode": "rwc", "_journal_mode": "WAL", "_synchronous": "NORMAL"}
		conf.DatabaseName = opt.DBFile
		if _, err := os.Stat(opt.DBFile); errors.Is(err, os.ErrNotExist) {
			if err := sqliteschema.SetupSchema(conf); err != nil {
				return nil, fmt.Errorf("temporal dev server: schema in %s: %w", opt.DBFile, err)
			}
		}
	}
	if opt.DBFile == "" {
		if err := sqliteschema.SetupSchema(conf); err != nil {
			return nil, fmt.Errorf("temporal dev server: schema: %w", err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, opt.Namespace, false, opt.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("temporal dev server: namespace %q: %w", opt.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("temporal dev server: namespace %q: %w", opt.Namespace, err)
	}
	return conf, nil
}

func serverConfig(ip string, frontendPort int, sqlConf *config.SQL) (*config.Config, error) {
	httpPort, err := choosePort(ip)
	if err != nil {
		return nil, err
	}
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = ip
	conf.Persistence.DefaultStore = "sqlite-default"
	conf.Persistence.VisibilityStore = "sqlite-default"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite-default": {SQL: sqlConf}}
	frontend := net.JoinHostPort(ip, strconv.Itoa(frontendPort))
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
			Enabled:                true,
			InitialFailoverVersion: 1,
			RPCAddress:             frontend,
			HTTPAddress:            net.JoinHostPort(ip, strconv.Itoa(httpPort)),
			ClusterID:              "glossobench-dev",
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range temporal.DefaultServices {
		var svc config.Service
		svc.RPC.BindOnIP = ip
		if name == string(primitives.FrontendService) {
			svc.RPC.GRPCPort = frontendPort
			svc.RPC.HTTPPort = httpPort
		} else {
			p, err := choosePort(ip)
			if err != nil {
				return nil, err
			}
			svc.RPC.GRPCPort = p
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return &conf, nil
}

// choosePort is FreePort; tests make it return a taken port.
var choosePort = FreePort

// FreePort returns a port free on ip now. It is chosen below Linux's
// ephemeral range (32768-60999), where every outgoing connection on the
// machine takes its local port and so can take the chosen one before the
// server binds it.
func FreePort(ip string) (int, error) {
	var err error
	for range 100 {
		p := 20000 + rand.IntN(12000)
		var ln net.Listener
		if ln, err = net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p))); err == nil {
			ln.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("temporal dev server: no free port on %s: %w", ip, err)
}

// serverFatal is a Fatal of the server's: its zap logger would exit the
// process, which in a test binary ends every test without a word on the
// console (the message goes to the log file).
type serverFatal struct{ msg string }

func (f serverFatal) Error() string { return "temporal dev server: " + f.msg }

// noExitLogger logs a Fatal as an error and panics with it, for start to
// recover. It embeds the log.Logger interface, not the zap logger, so it has
// no With method: log.With then wraps it, and the wrappers call its Fatal.
type noExitLogger struct{ log.Logger }

func (l noExitLogger) Fatal(msg string, tags ...tag.Tag) {
	l.Error(msg, tags...)
	panic(serverFatal{msg: fmt.Sprintf("%s %v", msg, tagValues(tags))})
}

func tagValues(tags []tag.Tag) []any {
	out := make([]any, len(tags))
	for i, t := range tags {
		out[i] = t.Value()
	}
	return out
}

// stopQuietly stops a server that failed while starting; its own panics on
// the half-built services are of no further interest.
func stopQuietly(srv temporal.Server) {
	defer func() { _ = recover() }()
	srv.Stop()
}

func waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal dev server: frontend %s not answering after %s: %w", addr, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
