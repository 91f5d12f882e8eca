package wireerr

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Each failure is said in a user's words, a final one naming the key it
// is given (and, for a caller that sends again, that it does not): the
// LLM client's base_url and an MCP server's url alike.
func TestWords(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://h.invalid/mcp?key=sk-secret",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	refused := dial(os.NewSyscallError("connect", syscall.ECONNREFUSED))
	noHost := dial(&net.DNSError{Err: "no such host", Name: "h.invalid", Server: "10.0.0.53:53", IsNotFound: true})
	dnsDown := dial(&net.DNSError{Err: "server misbehaving", Name: "h.example", Server: "10.0.0.53:53", IsTemporary: true})
	notTLS := &url.Error{Op: "Post", URL: "https://h/mcp", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}
	unknownCA := &url.Error{Op: "Post", URL: "https://h/mcp", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}
	otherHost := &url.Error{Op: "Post", URL: "https://h/mcp", Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "localhost"}}
	expired := &url.Error{Op: "Post", URL: "https://h/mcp", Err: x509.CertificateInvalidError{Reason: x509.Expired}}
	closed := &url.Error{Op: "Post", URL: "http://h/mcp", Err: io.EOF}
	banner := &url.Error{Op: "Post", URL: "http://h/mcp", Err: errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "SSH-2.0-OpenSSH_9.6"`)}
	mcpURL := URL{Key: "mcp.servers.remote.url"}
	baseURL := URL{Key: "base_url", Retried: true}
	for _, tc := range []struct {
		name  string
		err   error
		u     URL
		want  string
		final bool
	}{
		{"refused", refused, mcpURL, "nothing listens there (connection refused): is the server running, and is that its port?", false},
		{"refused, unwrapped", refused.(*url.Error).Err, baseURL, "nothing listens there (connection refused): is the server running, and is that its port?", false},
		{"no such host, MCP", noHost, mcpURL, `there is no host "h.invalid" (DNS: no such host): check the host name in mcp.servers.remote.url, and this machine's DNS`, true},
		{"no such host, LLM", noHost, baseURL, `there is no host "h.invalid" (DNS: no such host): check the host name in base_url, and this machine's DNS; not retried`, true},
		{"DNS down", dnsDown, mcpURL, `the host "h.example" could not be looked up (DNS failed or timed out): check the network and this machine's DNS`, false},
		{"TLS to plain HTTP, MCP", notTLS, mcpURL, "the server does not speak TLS: is the URL https:// for a plain http:// server? (check mcp.servers.remote.url)", true},
		{"TLS to plain HTTP, LLM", notTLS, baseURL, "the server does not speak TLS: is the URL https:// for a plain http:// server? (check base_url; not retried)", true},
		{"unknown authority", unknownCA, mcpURL, "the server's TLS certificate is not accepted: it is signed by an authority this machine does not trust (self-signed, or a private CA): check that mcp.servers.remote.url names the host the certificate is for; a gateway with a private CA needs SSL_CERT_FILE set to its CA's certificate", true},
		{"another host's certificate", otherHost, baseURL, `the server's TLS certificate is not accepted: it is not for the host "localhost": check that base_url names the host the certificate is for; a gateway with a private CA needs SSL_CERT_FILE set to its CA's certificate; not retried`, true},
		{"expired", expired, mcpURL, "the server's TLS certificate is not accepted: it has expired (or is not valid yet: is this machine's clock right?): check that mcp.servers.remote.url names the host the certificate is for; a gateway with a private CA needs SSL_CERT_FILE set to its CA's certificate", true},
		{"not HTTP", banner, mcpURL, "what answers there does not speak HTTP: is that the server's port?", false},
		{"closed", closed, mcpURL, "the server closed the connection without an answer (is that an HTTP server's port?)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, final := Words(tc.err, tc.u)
			if msg != tc.want || final != tc.final {
				t.Errorf("Words = %q, %v\nwant    %q, %v", msg, final, tc.want, tc.final)
			}
			for _, goText := range []string{"dial tcp", "lookup", "Post", "10.0.0.53", "sk-secret", "x509", "tls:"} {
				if strings.Contains(msg, goText) {
					t.Errorf("Words = %q: says %q", msg, goText)
				}
			}
		})
	}
}
