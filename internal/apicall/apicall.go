package apicall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Hosts are the hosts a kind of outbound call may make: "host" (any port) or "host:port", lower case. The list
// says which flag filled it, so that a refusal tells the operator what to change.
type Hosts struct {
	list []string
	flag HostsFlag
}

// HostsFlag names a list of hosts in what a refusal says: what is called, and the flag and environment variable
// that allow more.
type HostsFlag struct {
	For  string // "api_call tools", "MCP servers"
	Flag string // "--api-call-hosts"
	Env  string // "CONTRAIL_API_CALL_HOSTS"
}

// APICallHosts is the flag of Julep's api_call tools.
func APICallHosts() HostsFlag {
	return HostsFlag{For: "api_call tools", Flag: "--api-call-hosts", Env: "CONTRAIL_API_CALL_HOSTS"}
}

// ParseHosts reads the operator's list of api_call hosts (commas or separate values; blanks ignored).
func ParseHosts(values []string) (Hosts, error) { return ParseHostsFor(APICallHosts(), values) }

// ParseHostsFor reads the operator's list of hosts a kind of call may reach.
func ParseHostsFor(flag HostsFlag, values []string) (Hosts, error) {
	h := Hosts{flag: flag}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			part = strings.ToLower(strings.TrimSpace(part))
			if part == "" {
				continue
			}
			if strings.ContainsAny(part, "/@?#* ") {
				return Hosts{}, fmt.Errorf("%s host %q: give a host name or host:port, without a scheme, path or wildcard", strings.TrimPrefix(flag.Flag, "--"), part)
			}
			// An IPv6 address without a port is matched as url.URL.Hostname gives it: without brackets.
			if strings.HasPrefix(part, "[") && strings.HasSuffix(part, "]") {
				part = part[1 : len(part)-1]
			}
			h.list = append(h.list, part)
		}
	}
	return h, nil
}

// Empty reports whether no host is allowed (api_call tools cannot be used).
func (h Hosts) Empty() bool { return len(h.list) == 0 }

// String lists the allowed hosts.
func (h Hosts) String() string { return strings.Join(h.list, ",") }

// Allows reports whether u may be called: its host, or its host and port, is listed.
func (h Hosts) Allows(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return slices.Contains(h.list, host) || slices.Contains(h.list, net.JoinHostPort(host, port))
}

// Check refuses a URL that is not http(s) or whose host is not allowed, as a 400 that names field and says how to
// allow it.
func (h Hosts) Check(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errs.InvalidField(field, "%s must be an absolute http:// or https:// URL without credentials", field)
	}
	if h.Empty() {
		return &errs.Error{Code: errs.Invalid, Field: field, Message: fmt.Sprintf("%s: this server calls no hosts for %s; its operator allows hosts with %s (%s)",
			field, h.flag.For, h.flag.Flag, h.flag.Env)}
	}
	if !h.Allows(u) {
		return &errs.Error{Code: errs.Invalid, Field: field, Message: fmt.Sprintf("%s: host %q is not among the hosts this server may call for %s (%s); its operator allows more with %s (%s)",
			field, clipHost(u.Host), h.flag.For, h.String(), h.flag.Flag, h.flag.Env)}
	}
	return nil
}

// clipHost bounds a host quoted in a message (errs.MaxArg).
func clipHost(s string) string {
	if len(s) > errs.MaxArg {
		return s[:errs.MaxArg] + "…"
	}
	return s
}

// CheckRedirect is an http.Client's CheckRedirect that follows a redirect only to an allowed host, at most 5.
func (h Hosts) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if !h.Allows(req.URL) {
		return fmt.Errorf("redirected to %s, which is not an allowed host", req.URL.Host)
	}
	return nil
}

// Dialer is a dialer that refuses to connect to an address no outbound call of the platform may reach, whatever
// name led to it: link-local addresses (cloud metadata services live there: 169.254.169.254, fd00:ec2::254 and
// fe80::/10), unspecified and multicast ones. The check is made on the address being connected to, after the
// name is resolved, so a listed name that resolves (or is rebound) there is refused too. Loopback and private
// addresses pass: an operator lists them on purpose.
func Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("refused to connect to %s: not an IP address", address)
		}
		if reason := forbidden(ip.Unmap()); reason != "" {
			return fmt.Errorf("refused to connect to %s: %s", address, reason)
		}
		return nil
	}}
}

// Transport is the HTTP transport every outbound call of the platform uses (api_call tools, MCP servers): no proxy,
// which would connect for us past the dialer's check, and Dialer's check on every address connected to.
func Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = Dialer().DialContext
	return tr
}

// HeadersFor is a transport that adds headers (a tool's or a server's credentials) to the requests to target's own
// scheme and host only, then sends every request on through next. Set on the request instead, they would follow a
// redirect: Go's client copies a request's headers to the next hop, keeping all but Authorization and Cookie for
// another host, and all of them for the same host over plain http.
func HeadersFor(target *url.URL, headers map[string]string, next http.RoundTripper) http.RoundTripper {
	if len(headers) == 0 {
		return next
	}
	return headerTransport{scheme: strings.ToLower(target.Scheme), host: strings.ToLower(target.Host), headers: headers,
		next: next}
}

type headerTransport struct {
	scheme, host string
	headers      map[string]string
	next         http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.ToLower(r.URL.Scheme) == t.scheme && strings.ToLower(r.URL.Host) == t.host {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}

// forbidden says why an address may not be connected to, or "".
func forbidden(ip netip.Addr) string {
	switch {
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address (where metadata services answer)"
	case ip == netip.MustParseAddr("fd00:ec2::254"), ip == netip.MustParseAddr("100.100.100.200"):
		return "a cloud metadata address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
}

// Client makes api_call tools' requests.
type Client struct {
	hosts Hosts
	http  *http.Client
}

// maxTimeout bounds one call whatever its tool says; defaultTimeout is a call's whose tool says nothing.
const (
	maxTimeout     = 60 * time.Second
	defaultTimeout = 30 * time.Second
	// maxOutput bounds what of a response goes back to the model.
	maxOutput = 16 << 10
)

// NewClient returns a client that calls the allowed hosts only; a nil transport is Transport().
func NewClient(hosts Hosts, transport http.RoundTripper) *Client {
	if transport == nil {
		transport = Transport()
	}
	c := &Client{hosts: hosts}
	c.http = &http.Client{Transport: transport, CheckRedirect: hosts.CheckRedirect}
	return c
}

// Result is what an api_call tool gives the model: the status and the answer (JSON when it is).
type Result struct {
	StatusCode int             `json:"status_code"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Text       string          `json:"text,omitempty"`
}

// Call makes the request a tool describes with the model's arguments: an object whose fields go into the JSON body
// of a POST, PUT or PATCH (over the tool's own json), or into the query of other methods (over its params). The
// tool's URL, method and headers are the tool's: the model cannot send the request elsewhere.
func (c *Client) Call(ctx context.Context, def events.JulepAPICallDef, args json.RawMessage) (Result, error) {
	if err := c.hosts.Check("api_call.url", def.URL); err != nil {
		return Result{}, err
	}
	u, _ := url.Parse(def.URL)
	method := strings.ToUpper(def.Method)
	var given map[string]any
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &given); err != nil {
			return Result{}, fmt.Errorf("the arguments are not a JSON object: %w", err)
		}
	}
	var body io.Reader
	contentType := ""
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		switch {
		case def.Content != "" && len(given) == 0:
			body = strings.NewReader(def.Content)
		default:
			obj := objectOf(def.JSON)
			for k, v := range given {
				obj[k] = v
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				return Result{}, err
			}
			body, contentType = bytes.NewReader(raw), "application/json"
		}
	default:
		q := u.Query()
		for k, v := range objectOf(def.Params) {
			q.Set(k, scalar(v))
		}
		for k, v := range given {
			q.Set(k, scalar(v))
		}
		u.RawQuery = q.Encode()
	}
	timeout := defaultTimeout
	if def.Timeout > 0 {
		timeout = min(time.Duration(def.Timeout*float64(time.Second)), maxTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return Result{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	// The tool's headers go to its own host only, not to where a redirect points (HeadersFor).
	cc := *c.http
	cc.Transport = HeadersFor(u, def.Headers, c.http.Transport)
	if def.FollowRedirects != nil && !*def.FollowRedirects {
		cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	client := &cc
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", method, u.Host, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput+1))
	if err != nil {
		return Result{}, fmt.Errorf("read the answer of %s: %w", u.Host, err)
	}
	out := Result{StatusCode: resp.StatusCode}
	if len(raw) <= maxOutput && json.Valid(raw) {
		out.JSON = raw
	} else {
		out.Text = clip(raw)
	}
	return out, nil
}

func objectOf(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// scalar is a value as a query parameter holds it.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

func clip(b []byte) string {
	if len(b) <= maxOutput {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := maxOutput
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}
