// Package natstest starts real nats-servers for tests: one embedded server in a temp dir, or a three-node
// JetStream cluster on loopback ports. Nothing here fakes NATS.
package natstest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
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

// StartCluster runs a three-node JetStream cluster on free loopback ports and waits for a meta leader.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	const n = 3
	clusterPorts := freePorts(t, n)
	clientPorts := freePorts(t, n)
	routes := ""
	for i, p := range clusterPorts {
		if i > 0 {
			routes += ","
		}
		routes += fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	c := &Cluster{}
	base := t.TempDir()
	for i := 0; i < n; i++ {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   filepath.Join(base, fmt.Sprintf("n%d", i+1)),
			Cluster:    server.ClusterOpts{Name: "contrail-test", Host: "127.0.0.1", Port: clusterPorts[i]},
			Routes:     server.RoutesFromStr(routes),
			NoSigs:     true,
			NoLog:      true,
		}
		ns, err := server.NewServer(opts)
		if err != nil {
			t.Fatalf("cluster node %d: %v", i+1, err)
		}
		go ns.Start()
		c.Servers = append(c.Servers, ns)
		c.Opts = append(c.Opts, opts)
	}
	t.Cleanup(c.Shutdown)
	for _, ns := range c.Servers {
		if !ns.ReadyForConnections(10 * time.Second) {
			t.Fatalf("cluster node %s not ready", ns.Name())
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, ns := range c.Servers {
			if ns.JetStreamIsLeader() {
				c.waitJetStream(t)
				return c
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("cluster elected no JetStream meta leader in 20s")
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

// freePorts finds ports below 32768: nats-server's own tests avoid the kernel's ephemeral range so that an
// outgoing connection cannot take a port between the check and the bind.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	for p := 20000 + int(time.Now().UnixNano()%8000); len(out) < n && p < 32700; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		out = append(out, p)
	}
	if len(out) < n {
		t.Fatal("no free loopback ports")
	}
	return out
}
