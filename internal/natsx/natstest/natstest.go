// Package natstest starts real nats-servers for tests: one embedded server in a temp dir, or a three-node
// JetStream cluster on loopback ports. Nothing here fakes NATS.
package natstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
)

// Server is one embedded server and a client connection to it.
type Server struct {
	NS  *server.Server
	NC  *nats.Conn
	JS  jetstream.JetStream
	Dir string
}

// Start runs an embedded JetStream server with file storage in a fresh temp dir, without a listening port.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartIn(t, t.TempDir())
}

// StartIn runs an embedded server on an existing store dir (to restart on the same data).
func StartIn(t testing.TB, dir string) *Server {
	t.Helper()
	ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: dir})
	if err != nil {
		t.Fatalf("start embedded nats: %v", err)
	}
	nc, err := natsx.ConnectEmbedded(ns, t.Name())
	if err != nil {
		ns.Shutdown()
		t.Fatalf("connect: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	s := &Server{NS: ns, NC: nc, JS: js, Dir: dir}
	t.Cleanup(s.Shutdown)
	return s
}

// Connect opens another in-process connection (a component that needs its own, like a second node).
func (s *Server) Connect(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := natsx.ConnectEmbedded(s.NS, t.Name())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Shutdown stops the server; safe to call twice.
func (s *Server) Shutdown() {
	s.NC.Close()
	if s.NS.Running() {
		s.NS.Shutdown()
		s.NS.WaitForShutdown()
	}
}

// Cluster is three JetStream servers routed together on loopback.
type Cluster struct {
	Servers []*server.Server
	Opts    []*server.Options
}

// StartCluster runs a three-node JetStream cluster on loopback and waits for a meta leader. Ports are chosen by
// the kernel: the first node is the seed, the others route to it and learn of each other from it, so tests running
// at once in other processes cannot take a port between a check and a bind. The cluster's name is unique, so two
// test clusters can never join.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	const n = 3
	c := &Cluster{}
	t.Cleanup(c.Shutdown)
	base := t.TempDir()
	name := "contrail-test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 60 {
		name = name[:60]
	}
	name += fmt.Sprintf("-%d", time.Now().UnixNano()%1_000_000)
	// JetStream refuses to cluster without configured routes, so the seed's route port is chosen up front (the only
	// port taken by check-then-bind) and every node, the seed included, routes to it.
	seed := fmt.Sprintf("nats-route://127.0.0.1:%d", freePort(t))
	for i := 0; i < n; i++ {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   filepath.Join(base, fmt.Sprintf("n%d", i+1)),
			Cluster:    server.ClusterOpts{Name: name, Host: "127.0.0.1", Port: server.RANDOM_PORT},
			NoSigs:     true,
			NoLog:      true,
		}
		opts.Routes = server.RoutesFromStr(seed)
		if i == 0 {
			u, _ := url.Parse(seed)
			opts.Cluster.Port, _ = strconv.Atoi(u.Port())
		}
		ns, err := server.NewServer(opts)
		if err != nil {
			t.Fatalf("cluster node %d: %v", i+1, err)
		}
		go ns.Start()
		c.Servers = append(c.Servers, ns)
		c.Opts = append(c.Opts, opts)
	}
	for _, ns := range c.Servers {
		if !ns.ReadyForConnections(20 * time.Second) {
			t.Fatalf("cluster node %s not ready", ns.Name())
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		peers := 0
		for _, ns := range c.Servers {
			if ns.NumRoutes() >= n-1 {
				peers++
			}
		}
		ready := false
		for _, ns := range c.Servers {
			// The meta leader must know every JetStream peer, or an R3 stream finds "no suitable peers".
			ready = ready || (ns.JetStreamIsLeader() && len(ns.JetStreamClusterPeers()) == n)
		}
		for _, ns := range c.Servers {
			ready = ready && ns.JetStreamIsCurrent()
		}
		if peers == n && ready {
			c.waitJetStream(t)
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("cluster did not form with a JetStream meta leader in 30s")
	return nil
}

// waitJetStream waits until the JetStream API answers through every node.
func (c *Cluster) waitJetStream(t testing.TB) {
	deadline := time.Now().Add(20 * time.Second)
	for _, ns := range c.Servers {
		for {
			nc, err := nats.Connect(ns.ClientURL())
			if err == nil {
				js, _ := jetstream.New(nc)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err = js.AccountInfo(ctx)
				cancel()
				nc.Close()
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("jetstream not ready on %s: %v", ns.Name(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// URLs is a client URL list naming every node.
func (c *Cluster) URLs() string {
	out := ""
	for i, ns := range c.Servers {
		if i > 0 {
			out += ","
		}
		out += ns.ClientURL()
	}
	return out
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for _, ns := range c.Servers {
		if ns.Running() {
			ns.Shutdown()
		}
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
