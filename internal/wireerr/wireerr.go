// Package wireerr is the one rule for a request to a URL of the spec that
// got no HTTP answer, said as a user reads it: what is at the other end
// and what to check, not Go's transport text ("dial tcp …: connect:
// connection refused", "tls: first record does not look like a TLS
// handshake", a bare "EOF"). The LLM client (base_url) and the HTTP MCP
// servers (mcp.servers.NAME.url) both use it. It imports nothing of
// teamrun's.
package wireerr

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// URL is the setting a request's URL comes from, as a message names it.
type URL struct {
	Key string // such as base_url, or mcp.servers.search.url
	// Retried says the caller sends a request again unless its failure
	// is final: a final one then says it is not.
	Retried bool
}

// Words is err, what a request got instead of an HTTP answer (a
// *url.Error, or what one wraps), as a user reads it. final is a failure
// that sending again cannot mend (a host name that does not exist, a
// certificate not trusted, TLS to a plain HTTP server): the settings must
// change. A final failure's words name u.Key; the others' do not (a
// server that is down is not the setting's fault): a caller that knows
// where the URL comes from adds From.
func Words(err error, u URL) (msg string, final bool) {
	var (
		ue     *url.Error
		tlsErr tls.RecordHeaderError
		dnsErr *net.DNSError
	)
	// url.Error repeats the URL, query and all, which the caller names
	// without credentials: keep only what it wraps.
	if errors.As(err, &ue) {
		err = ue.Err
	}
	notRetried := ""
	if u.Retried {
		notRetried = "; not retried"
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing listens there (connection refused): is the server running, and is that its port?", false
	case errors.As(err, &tlsErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf("the server does not speak TLS: is the URL https:// for a plain http:// server? (check %s%s)", u.Key, notRetried), true
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Sprintf("there is no host %q (DNS: no such host): check the host name in %s, and this machine's DNS%s", dnsErr.Name, u.Key, notRetried), true
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("the host %q could not be looked up (DNS failed or timed out): check the network and this machine's DNS", dnsErr.Name), false
	case certWords(err) != "":
		return fmt.Sprintf("the server's TLS certificate is not accepted: %s: check that %s names the host the certificate is for; a gateway with a private CA needs SSL_CERT_FILE set to its CA's certificate%s",
			certWords(err), u.Key, notRetried), true
	case strings.Contains(err.Error(), "malformed HTTP response"),
		// What spoke first, before the request was sent (an SSH
		// banner): Go's transport has no words of its own for it.
		strings.Contains(err.Error(), "readLoopPeekFailLocked"):
		return "what answers there does not speak HTTP: is that the server's port?", false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection without an answer (is that an HTTP server's port?)", false
	}
	return err.Error(), false
}

// From is what a failure whose words do not name the setting adds: where
// the URL comes from (a key of the spec, an environment variable, a
// provider's), to check.
func From(source string) string {
	return fmt.Sprintf("the URL comes from %s: check it", source)
}

// certWords says why a server's certificate was refused; "" for an error
// that is no certificate's.
func certWords(err error) string {
	var (
		host    x509.HostnameError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &host):
		return fmt.Sprintf("it is not for the host %q", host.Host)
	case errors.As(err, &unknown):
		return "it is signed by an authority this machine does not trust (self-signed, or a private CA)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "it has expired (or is not valid yet: is this machine's clock right?)"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "it does not verify"
	}
	return ""
}

// CredentialsRefused is what a 401 or 403 says when what was sent is the
// credentials the URL of key carries (no header or key replaced them):
// that they were, not that nothing was. Their values are never shown.
// The LLM client and the HTTP MCP servers both say it.
func CredentialsRefused(key string) string {
	return fmt.Sprintf("the credentials %s carries (its user name and password, a token as its user name or one in its query; not shown) were sent and refused", key)
}
