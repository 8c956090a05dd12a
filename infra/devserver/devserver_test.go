package devserver

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// holdPort keeps a port taken for the rest of the test.
func holdPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// takeServicePort makes choosePort return a taken port for the first
// service after the frontend (the second port serverConfig chooses) on the
// first `times` starts.
func takeServicePort(t *testing.T, times int) *int {
	taken := holdPort(t)
	calls, starts := 0, 0
	choosePort = func(ip string) (int, error) {
		calls++
		if calls%4 == 1 {
			starts++
		}
		if calls%4 == 2 && starts <= times {
			return taken, nil
		}
		return FreePort(ip)
	}
	t.Cleanup(func() { choosePort = FreePort })
	return &starts
}

// A port taken between choosing and binding it (by any connection on the
// machine) used to end the whole process through the server's Fatal, with
// the message only in the log file: a test binary stopped mid-package with
// no failure printed. Start now chooses again.
func TestStartChoosesAgainWhenAServicePortIsTaken(t *testing.T) {
	starts := takeServicePort(t, 1)
	srv, err := Start(Options{DBFile: filepath.Join(t.TempDir(), "t.db"), Port: -1, UIPort: -1, LogFile: filepath.Join(t.TempDir(), "log")})
	if err != nil {
		t.Fatalf("Start with one taken port: %v", err)
	}
	defer srv.Stop()
	if *starts != 2 {
		t.Errorf("the server started %d times, want 2 (the first on the taken port)", *starts)
	}
	conn, err := net.Dial("tcp", srv.Address)
	if err != nil {
		t.Fatalf("frontend %s: %v", srv.Address, err)
	}
	conn.Close()
}

// When every attempt meets a taken port, Start says so as an error.
func TestStartReportsATakenPortAsAnError(t *testing.T) {
	takeServicePort(t, 100)
	srv, err := Start(Options{DBFile: filepath.Join(t.TempDir(), "t.db"), Port: -1, UIPort: -1, LogFile: filepath.Join(t.TempDir(), "log")})
	if err == nil {
		srv.Stop()
		t.Fatal("Start succeeded with a taken service port")
	}
	if !errors.As(err, new(serverFatal)) || !strings.Contains(err.Error(), "gRPC listener") {
		t.Errorf("error %q, want the server's own words on the listener", err)
	}
}

// A named frontend port that is taken (another server running) is an error
// before the database file is created or touched.
func TestStartOnATakenNamedPortLeavesTheDatabaseAlone(t *testing.T) {
	port := holdPort(t)
	db := filepath.Join(t.TempDir(), "t.db")
	srv, err := Start(Options{DBFile: db, Port: port, UIPort: -1})
	if err == nil {
		srv.Stop()
		t.Fatal("Start succeeded on a taken port")
	}
	if !strings.Contains(err.Error(), "is not free") {
		t.Errorf("error %q does not say the address is taken", err)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database %s was created before the port check: %v", db, err)
	}
}
