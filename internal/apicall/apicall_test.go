package apicall_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/apicall"
)

func hosts(t *testing.T, list ...string) apicall.Hosts {
	h, err := apicall.ParseHosts(list)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The model's arguments go into a POST's JSON body over the tool's own, and into a GET's query; the tool's headers
// are sent; the answer comes back as JSON when it is JSON.
func TestCall(t *testing.T) {
	var got struct {
		method, query, body, header string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.query, got.body, got.header = r.Method, r.URL.RawQuery, string(b), r.Header.Get("X-Api-Key")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	c := apicall.NewClient(hosts(t, strings.TrimPrefix(srv.URL, "http://")), nil)
	post := events.JulepAPICallDef{Method: "POST", URL: srv.URL + "/x", Headers: map[string]string{"X-Api-Key": "k"},
		JSON: json.RawMessage(`{"fixed":1,"q":"tool's"}`)}
	res, err := c.Call(context.Background(), post, json.RawMessage(`{"q":"model's"}`))
	if err != nil || res.StatusCode != 200 || string(res.JSON) != `{"ok":true}` {
		t.Fatalf("post: %+v %v", res, err)
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(got.body), &body)
	if got.method != "POST" || body["q"] != "model's" || body["fixed"] != float64(1) || got.header != "k" {
		t.Fatalf("the POST sent: %+v", got)
	}
	get := events.JulepAPICallDef{Method: "GET", URL: srv.URL + "/y?a=1", Params: json.RawMessage(`{"b":"2"}`)}
	if _, err := c.Call(context.Background(), get, json.RawMessage(`{"c":3}`)); err != nil {
		t.Fatal(err)
	}
	if got.method != "GET" || got.query != "a=1&b=2&c=3" {
		t.Fatalf("the GET sent: %+v", got)
	}
}

// A tool's URL, and every redirect, must name an allowed host.
func TestOnlyAllowedHosts(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a host that is not allowed was called")
	}))
	t.Cleanup(elsewhere.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/secret", http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	c := apicall.NewClient(hosts(t, strings.TrimPrefix(redirect.URL, "http://")), nil)
	if _, err := c.Call(context.Background(), events.JulepAPICallDef{Method: "GET", URL: redirect.URL}, nil); err == nil ||
		!strings.Contains(err.Error(), "not an allowed host") {
		t.Fatalf("a redirect to another host: %v", err)
	}
	if _, err := c.Call(context.Background(), events.JulepAPICallDef{Method: "GET", URL: elsewhere.URL}, nil); err == nil {
		t.Fatal("a tool whose URL names another host was called")
	}
	if err := hosts(t).Check("api_call.url", redirect.URL); err == nil {
		t.Fatal("no hosts allowed, yet the URL passed")
	}
}

// Dialer refuses link-local (where metadata services answer), unspecified and multicast addresses before any
// socket is opened; asked directly, so that a broken guard sends nothing anywhere.
func TestTheDialerRefusesWhatIsNotAHost(t *testing.T) {
	control := apicall.Dialer().Control
	for addr, want := range map[string]string{
		"169.254.169.254:80":          "link-local",
		"[::ffff:169.254.169.254]:80": "link-local",
		"[fe80::1]:80":                "link-local",
		"0.0.0.0:80":                  "unspecified",
		"239.1.2.3:80":                "multicast",
		"[fd00:ec2::254]:80":          "metadata",
	} {
		if err := control("tcp", addr, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", addr, err, want)
		}
	}
	if err := control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
}

// A client made with no transport of its own dials through Dialer: a listed host whose address the dialer refuses
// gets no connection. The address is the unspecified one at a loopback test server's port, so that a client that
// dialled without the guard would reach only that server, which counts it.
func TestTheDefaultTransportDialsThroughTheGuard(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	c := apicall.NewClient(hosts(t, "0.0.0.0"), nil)
	_, err := c.Call(context.Background(), events.JulepAPICallDef{Method: "GET", URL: "http://0.0.0.0" + port + "/x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "unspecified") || reached.Load() != 0 {
		t.Fatalf("a call to the unspecified address: %v (the server was reached %d times)", err, reached.Load())
	}
}

// A tool's headers (its credentials) go to its own host only: a redirect to another allowed host does not carry
// them, while a redirect within the tool's host does.
func TestAToolsHeadersDoNotFollowARedirectToAnotherHost(t *testing.T) {
	var elsewhereGot, ownGot atomic.Value
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereGot.Store(r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{"where":"elsewhere"}`))
	}))
	t.Cleanup(elsewhere.Close)
	// The same server under another name: another host, as far as the client knows.
	elsewhereURL := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, elsewhereURL+"/landed", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/landed", http.StatusFound)
		default:
			ownGot.Store(r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Authorization"))
			_, _ = w.Write([]byte(`{"where":"own"}`))
		}
	}))
	t.Cleanup(own.Close)
	c := apicall.NewClient(hosts(t, strings.TrimPrefix(own.URL, "http://"), strings.TrimPrefix(elsewhereURL, "http://")), nil)
	headers := map[string]string{"X-Api-Key": "secret-key", "Authorization": "Bearer secret-token"}

	res, err := c.Call(context.Background(), events.JulepAPICallDef{Method: "GET", URL: own.URL + "/away", Headers: headers}, nil)
	if err != nil || string(res.JSON) != `{"where":"elsewhere"}` {
		t.Fatalf("the redirect to another allowed host: %+v %v", res, err)
	}
	if got := elsewhereGot.Load(); got != "|" {
		t.Errorf("the other host was sent the tool's headers: %q", got)
	}
	res, err = c.Call(context.Background(), events.JulepAPICallDef{Method: "GET", URL: own.URL + "/moved", Headers: headers}, nil)
	if err != nil || string(res.JSON) != `{"where":"own"}` {
		t.Fatalf("the redirect within the tool's host: %+v %v", res, err)
	}
	if got := ownGot.Load(); got != "secret-key|Bearer secret-token" {
		t.Errorf("the tool's own host, past a redirect, was sent headers %q", got)
	}
}
