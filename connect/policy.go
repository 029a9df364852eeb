package connect

import (
	"net/http"
	"net/url"
	"time"

	"github.com/burnrate/burnrate/connect/egress"
)

// A connection acts for one org, while the server it runs on sits in the
// operator's network and may carry an
// identity of its own: an EC2 instance role, AWS_* variables or ~/.aws,
// an Azure managed identity, GCP application default credentials. On a
// shared (SaaS) install, a connection that fell back to that identity
// would let any org's admin read whatever the operator's identity can, and
// import it into their org; and an endpoint aimed at the server's own
// network would reach its database, a metadata service or an admin page.
// So every connection signs in with keys of its
// own, and the host's identity is lent only when the operator says so
// (Service.AllowHostCredentials, CONNECTIONS_ALLOW_HOST_CREDENTIALS), on a
// single-tenant install. The rule is checked when a connection is saved
// and again before every sync and test (prepare), whatever its kind: a
// connector gets its credentials from prepare, so it cannot skip the rule.
// Every call a tenant can aim dials through Service.Egress (the transport
// below), which refuses, after DNS, addresses that are not public unless
// the operator lists them (CONNECTIONS_ALLOW_PRIVATE).
// See docs/operations.md, "Connections and the host's network and
// identity".

// ownKey reports whether c carries a key of the connection's own, of any
// kind. A connector that signs in some other way adds its key here.
func (c Credentials) ownKey() bool {
	return c.APIKey != "" || c.AccessKeyID != "" || c.AccountKey != "" || c.SASToken != "" || c.ServiceAccountJSON != ""
}

// keyField is the input field where a connection of kind takes its key.
func keyField(name string) string {
	if k, ok := kindOf(name); ok {
		return k.keyField
	}
	return "api_key"
}

// checkCredentials refuses credentials that would sign in as this server
// rather than with a key of the connection's own, unless the operator
// allows it.
func (s *Service) checkCredentials(kind string, cred Credentials) error {
	if cred.ownKey() || s.AllowHostCredentials {
		return nil
	}
	return &InputError{keyField(kind), "give the connection a key of its own: this server does not lend its own identity " +
		"to connections (an operator of a single-tenant install may allow it with CONNECTIONS_ALLOW_HOST_CREDENTIALS=1)"}
}

// checkEndpoint refuses early an endpoint that names an address the policy
// does not let connections reach (127.0.0.1, localhost, 169.254.169.254):
// what would be refused when dialled anyway.
func (s *Service) checkEndpoint(set Settings) error {
	if set.EndpointURL == "" {
		return nil
	}
	u, err := url.Parse(set.EndpointURL)
	if err != nil {
		return &InputError{"endpoint_url", "not a URL"}
	}
	if s.Egress.CheckHost(u.Hostname()) != nil {
		return &InputError{"endpoint_url", "it names a loopback, private or link-local address, which connections may not reach " +
			"(an operator may allow private endpoints with CONNECTIONS_ALLOW_PRIVATE)"}
	}
	return nil
}

// transport is the HTTP transport of every call a tenant can aim: dialled
// through the egress policy, never through a proxy, each answer due within
// CallTimeout.
func (s *Service) transport() *http.Transport {
	return s.Egress.Transport(egress.Timeouts{Dial: 30 * time.Second, TLSHandshake: 30 * time.Second, ResponseHeader: CallTimeout})
}
