package clustertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Options shape a topology.
type Options struct {
	Binaries Binaries
	// Dir holds every store, data dir and log (default: t.TempDir()).
	Dir string
	// Nodes is how many Contrail nodes run (default 2, as in docker-compose.yml).
	Nodes int
	// ModelsDir, when set, is every node's --models-dir (where `make models` put the use-lite weights).
	ModelsDir string
	// LogLevel is the nodes' --log-level (default info).
	LogLevel string
	// StartTimeout bounds the wait for every node to be ready (default 2 minutes).
	StartTimeout time.Duration
}

// NATSServer is one nats-server process of the cluster.
type NATSServer struct {
	*Process
	ClientPort, ClusterPort, HTTPPort int
	hc                                *http.Client
}

// URL is where clients connect.
func (s *NATSServer) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(s.ClientPort) }

// MonitorURL is the server's HTTP monitoring endpoint (/healthz, /jsz, /varz).
func (s *NATSServer) MonitorURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.HTTPPort) }

// Node is one `contrail serve` process.
type Node struct {
	*Process
	// Index is the node's place in Cluster.Nodes.
	Index int
	URL   string
	hc    *http.Client
}

// StartupFailure is a node that exited before it was ready while the topology started. Docker's restart policy
// would start it again; so does Start, and records it here.
type StartupFailure struct {
	Node string
	Exit string
	// Log is the end of what it printed.
	Log string
}

// Cluster is the running topology: three NATS servers in one JetStream cluster and the Contrail nodes using them.
type Cluster struct {
	NATS  []*NATSServer
	Nodes []*Node
	// AdminKey is every node's CONTRAIL_ADMIN_KEY.
	AdminKey string
	// StartupFailures lists the nodes that exited while the topology started (and were started again).
	StartupFailures []StartupFailure
	// Started is when the Contrail nodes were started (all at the same moment); Ready, when the last was ready.
	Started, Ready time.Time
	Names          natsx.Names
	// NC and JS are the test's own connection to the cluster, for what an operator would look at with the nats
	// CLI: stream leaders, leases, the log.
	NC *nats.Conn
	JS jetstream.JetStream

	opts Options
	mu   sync.Mutex
}

// Start runs three nats-servers in a JetStream cluster on loopback ports chosen now, waits until JetStream is enabled
// on each (what docker-compose.yml's health check waits for), then starts every Contrail node at the same moment
// and waits until all are ready. Everything is stopped when the test ends; when it fails, the end of every log is
// shown.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	names, _ := natsx.NewNames("")
	c := &Cluster{AdminKey: auth.NewKey(), Names: names, opts: opts}
	t.Cleanup(func() {
		if t.Failed() {
			c.DumpLogs(t, 150)
		}
		c.stopAll()
		if dir := os.Getenv("CONTRAIL_CLUSTER_LOGS"); dir != "" {
			c.keepLogs(t, dir)
		}
	})
	ports, err := freePorts(3*3 + opts.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	c.NATS = c.natsServers(ports[:9])
	c.Nodes = c.contrailNodes(ports[9:])
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	for _, s := range c.NATS {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range c.NATS {
		if err := s.WaitHealthy(ctx, true); err != nil {
			t.Fatalf("nats-server %s: %v", s.Name, err)
		}
	}
	c.Started = time.Now()
	for _, n := range c.Nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.waitNodesStarted(ctx); err != nil {
		t.Fatal(err)
	}
	c.Ready = time.Now()
	c.NC, err = nats.Connect(c.URLs(), nats.Name("clustertest observer"), nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatalf("connect to the cluster: %v", err)
	}
	if c.JS, err = jetstream.New(c.NC); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Cluster) natsServers(ports []int) []*NATSServer {
	clusterName := fmt.Sprintf("clustertest-%d", time.Now().UnixNano()%1_000_000_000)
	out := make([]*NATSServer, 3)
	for i := range out {
		out[i] = &NATSServer{ClientPort: ports[3*i], ClusterPort: ports[3*i+1], HTTPPort: ports[3*i+2], hc: newHTTPClient()}
	}
	for i, s := range out {
		name := fmt.Sprintf("n%d", i+1)
		var routes []string
		for j, o := range out {
			if j != i {
				routes = append(routes, "nats-route://127.0.0.1:"+strconv.Itoa(o.ClusterPort))
			}
		}
		// The flags of docker-compose.yml's nats services, on loopback ports.
		args := []string{"--name", name, "--addr", "127.0.0.1", "--port", strconv.Itoa(s.ClientPort),
			"--http_port", strconv.Itoa(s.HTTPPort),
			"--jetstream", "--store_dir", filepath.Join(c.opts.Dir, name),
			"--cluster_name", clusterName, "--cluster", "nats://127.0.0.1:" + strconv.Itoa(s.ClusterPort),
			"--routes", strings.Join(routes, ",")}
		s.Process = newProcess(name, c.opts.Binaries.NATSServer, filepath.Join(c.opts.Dir, name+".log"), args, baseEnv())
	}
	return out
}

func (c *Cluster) contrailNodes(ports []int) []*Node {
	signingSecret := auth.NewKey()
	out := make([]*Node, len(ports))
	for i, port := range ports {
		name := fmt.Sprintf("contrail-%d", i+1)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		args := []string{"serve", "--addr", addr, "--data-dir", filepath.Join(c.opts.Dir, name),
			"--nats-url", c.URLs(), "--nats-listen", "off", "--node-name", name,
			"--log-format", "json", "--log-level", c.opts.LogLevel}
		if c.opts.ModelsDir != "" {
			args = append(args, "--models-dir", c.opts.ModelsDir)
		}
		env := append(baseEnv(), "CONTRAIL_ADMIN_KEY="+c.AdminKey, "CONTRAIL_SIGNING_SECRET="+signingSecret)
		out[i] = &Node{Index: i, URL: "http://" + addr, hc: newHTTPClient(),
			Process: newProcess(name, c.opts.Binaries.Contrail, filepath.Join(c.opts.Dir, name+".log"), args, env)}
	}
	return out
}

// baseEnv is what a child inherits: enough to run, nothing of the developer's Contrail or OpenAI settings.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CONTRAIL_") || strings.HasPrefix(k, "OPENAI_") || k == "OLLAMA_HOST" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// waitNodesStarted waits until every node is ready. A node that exits first is recorded and started again, as
// docker's restart policy would.
func (c *Cluster) waitNodesStarted(ctx context.Context) error {
	const maxRestarts = 5
	for _, n := range c.Nodes {
		restarts := 0
		for {
			err := n.WaitReady(ctx)
			if err == nil {
				break
			}
			if n.Running() || restarts == maxRestarts {
				return fmt.Errorf("node %s not ready: %w", n.Name, err)
			}
			c.mu.Lock()
			c.StartupFailures = append(c.StartupFailures, StartupFailure{Node: n.Name, Exit: n.ExitStatus(), Log: n.LogTail(20)})
			c.mu.Unlock()
			restarts++
			if err := n.Start(); err != nil {
				return err
			}
		}
	}
	return nil
}

// URLs lists every server's client URL, as --nats-url takes them.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.NATS))
	for i, s := range c.NATS {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// NATSNamed returns the server with the given name, or nil.
func (c *Cluster) NATSNamed(name string) *NATSServer {
	for _, s := range c.NATS {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// NodeNamed returns the node with the given name, or nil.
func (c *Cluster) NodeNamed(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// EventsLeader is the server leading the EVENTS stream, as the JetStream API says; it waits while the stream has
// no leader (an election).
func (c *Cluster) EventsLeader(ctx context.Context) (*NATSServer, error) {
	for {
		info, err := c.streamInfo(ctx, c.Names.EventsStream())
		if err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
			if s := c.NATSNamed(info.Cluster.Leader); s != nil {
				return s, nil
			}
			return nil, fmt.Errorf("EVENTS is led by %q, which is none of the cluster's servers", info.Cluster.Leader)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("find the leader of EVENTS: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) streamInfo(ctx context.Context, name string) (*jetstream.StreamInfo, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.JS.Stream(rctx, name)
	if err != nil {
		return nil, err
	}
	return st.Info(rctx)
}

// LastSequence is the last sequence of the EVENTS stream.
func (c *Cluster) LastSequence(ctx context.Context) (uint64, error) {
	info, err := c.streamInfo(ctx, c.Names.EventsStream())
	if err != nil {
		return 0, fmt.Errorf("read the last sequence of EVENTS: %w", err)
	}
	return info.State.LastSeq, nil
}

// The run sweeper's lease: the key run_sweeper of the leases bucket, holding the holder's node name
// (handlers/sweeper.LeaseName in lease.Bucket). Spelled here because the nodes are other processes.
const (
	leasesBucket = "leases"
	sweeperLease = "run_sweeper"
)

// SweeperHolder is the node holding the run sweeper's lease; it waits while nobody holds it.
func (c *Cluster) SweeperHolder(ctx context.Context) (*Node, error) {
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		kv, err := c.JS.KeyValue(rctx, c.Names.Bucket(leasesBucket))
		if err == nil {
			var e jetstream.KeyValueEntry
			if e, err = kv.Get(rctx, sweeperLease); err == nil {
				holder := string(e.Value())
				cancel()
				if n := c.NodeNamed(holder); n != nil {
					return n, nil
				}
				return nil, fmt.Errorf("the sweeper lease is held by %q, which is none of the nodes", holder)
			}
		}
		cancel()
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("find the sweeper's holder: %w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// keepLogs copies every process's whole log into dir (CONTRAIL_CLUSTER_LOGS), for reading after the test's temp
// dirs are gone.
func (c *Cluster) keepLogs(t testing.TB, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("keep logs: %v", err)
		return
	}
	var ps []*Process
	for _, s := range c.NATS {
		ps = append(ps, s.Process)
	}
	for _, n := range c.Nodes {
		ps = append(ps, n.Process)
	}
	for _, p := range ps {
		raw, err := os.ReadFile(p.LogPath())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, p.Name+".log"), raw, 0o644)
		}
		if err != nil {
			t.Logf("keep log of %s: %v", p.Name, err)
		}
	}
	t.Logf("logs kept in %s", dir)
}

// DumpLogs shows the end of every process's log in the test's output.
func (c *Cluster) DumpLogs(t testing.TB, lines int) {
	t.Helper()
	for _, s := range c.NATS {
		t.Logf("=== last %d lines of %s (%s):\n%s", lines, s.Name, s.LogPath(), s.LogTail(lines))
	}
	for _, n := range c.Nodes {
		t.Logf("=== last %d lines of %s (%s):\n%s", lines, n.Name, n.LogPath(), n.LogTail(lines))
	}
}

// stopAll stops the nodes, then the servers; whatever does not stop in time is killed.
func (c *Cluster) stopAll() {
	if c.NC != nil {
		c.NC.Close()
	}
	var wg sync.WaitGroup
	stop := func(p *Process) {
		defer wg.Done()
		if p.Running() {
			_, _ = p.Stop(10 * time.Second)
		}
	}
	for _, n := range c.Nodes {
		wg.Add(1)
		go stop(n.Process)
	}
	wg.Wait()
	for _, s := range c.NATS {
		wg.Add(1)
		go stop(s.Process)
	}
	wg.Wait()
}

// freePorts picks n distinct loopback ports the kernel has free now. The servers bind them a moment later (and
// again after each restart, which is why they are fixed rather than chosen at bind time).
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
