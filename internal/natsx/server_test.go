package natsx_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/natsx"
)

// occupy takes a loopback port for the test, as another program would.
func occupy(t *testing.T) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), ln.Addr().(*net.TCPAddr).Port
}

func TestABusyListenPortFailsAtOnceSayingWhatToDo(t *testing.T) {
	t.Parallel()
	addr, port := occupy(t)
	ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: t.TempDir(), Listen: addr, ListenSet: true})
	if err == nil {
		ns.Shutdown()
		t.Fatalf("the embedded server started on a port in use (%s)", addr)
	}
	for _, want := range []string{strconv.Itoa(port), "in use", "--nats-listen off"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error should say %q: %v", want, err)
		}
	}
}

func TestABusyPortFromTheConfigFileNamesTheFile(t *testing.T) {
	t.Parallel()
	addr, port := occupy(t)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("listen: "+addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: t.TempDir(), ConfigFile: conf})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)) || !strings.Contains(err.Error(), conf) ||
		!strings.Contains(err.Error(), "--nats-listen off") {
		t.Fatalf("a config file's port in use: %v", err)
	}
}

// What the port check cannot see in advance (here the monitoring port of a config file) ends the start as soon
// as the server reports it, with its words, instead of a wait for a server that will never be ready.
func TestAFatalStartErrorOfTheServerIsReturned(t *testing.T) {
	t.Parallel()
	_, busy := occupy(t)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listen: 127.0.0.1:-1\nhttp: 127.0.0.1:%d\n", busy)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: t.TempDir(), ConfigFile: conf})
	if err == nil || !strings.Contains(err.Error(), "monitor") || !strings.Contains(err.Error(), strconv.Itoa(busy)) {
		t.Fatalf("a monitoring port in use: %v", err)
	}
}

// Port 0 means any free port, as it does for --addr (nats-server alone would read it as 4222).
func TestListenPortZeroPicksAFreePort(t *testing.T) {
	t.Parallel()
	ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", ListenSet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	addr, ok := ns.Addr().(*net.TCPAddr)
	if !ok || addr.Port == 0 || addr.Port == 4222 {
		t.Fatalf("listening on %v, want a random port", ns.Addr())
	}
}
