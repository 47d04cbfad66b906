package httpapi

import (
	"net/http"

	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/replica"
)

// Client certificates (docs/security.md). With TLS, the caller's
// certificate is part of who calls, decided once per request by the
// wrapper (authorize) whichever server received it: the chain the
// listener verified, or, for a request a follower forwarded, the chain
// the follower's listener verified, carried over the servers' mutual TLS
// (replica.ClientChain) and verified here again. Then:
//
//   - an agent's call (route.ByNode, route.NodeJoin) needs a certificate
//     of role agent, ACLs on or off;
//   - without ACLs, certificates are what authenticates users: the
//     users' routes need a certificate of role cli or server (a
//     scraper's, role scrape, reads the routes marked route.Scrape:
//     /metrics), unless the server was told to let anonymous callers in
//     (Config.AllowAnonymous, loudly);
//   - with ACLs the tokens decide the users' routes, a certificate or
//     not.

// codeClientCert is the code of a call refused for its certificate.
const codeClientCert = "client-certificate"

// certOf verifies and records, in r's caller, the certificate r's client
// presented (TLS only).
func (s *API) certOf(r *http.Request) error {
	if !s.cfg.TLS {
		return nil
	}
	chain, forwarded := replica.ClientChain(r)
	if len(chain) == 0 {
		return nil
	}
	if forwarded && s.cfg.VerifyClient != nil {
		if err := s.cfg.VerifyClient(chain); err != nil {
			return route.Forbidden(codeClientCert, "the client certificate a server forwarded does not verify: %v", err)
		}
	}
	c := callerOf(r.Context())
	c.CertRole, c.CertName = pki.RoleOf(chain[0]), chain[0].Subject.CommonName
	return nil
}

// requireAgentCert refuses an agent's call that did not come with a
// certificate of role agent, when the API runs TLS.
func (s *API) requireAgentCert(r *http.Request) error {
	if !s.cfg.TLS {
		return nil
	}
	switch role := callerOf(r.Context()).CertRole; role {
	case pki.RoleAgent:
		return nil
	case "":
		return nodeAuthError("an agent's call needs the agent's certificate (mutual TLS): none was presented")
	default:
		return nodeAuthError("an agent's call needs a certificate of role agent, got one of role %s", role)
	}
}

// requireUserCert is the rule of a user's route where certificates
// authenticate callers (TLS without ACLs): a certificate of role cli or
// server, or scrape for a route a scraper reads.
func (s *API) requireUserCert(r *http.Request, rt route.Route) error {
	if !s.cfg.TLS || s.cfg.ACL || s.cfg.AllowAnonymous {
		return nil
	}
	switch role := callerOf(r.Context()).CertRole; {
	case role == pki.RoleCLI, role == pki.RoleServer, role == pki.RoleScrape && rt.Scrape:
		return nil
	case role == "":
		return route.Forbidden(codeClientCert, "this cell authenticates callers by their certificates (TLS without ACLs): %s %s needs a client certificate of role cli "+
			"(strata tls cert create --cli; give it with STRATA_CLIENT_CERT and STRATA_CLIENT_KEY), and none was presented", r.Method, r.URL.Path)
	default:
		return route.Forbidden(codeClientCert, "%s %s needs a client certificate of role cli, got one of role %s (%s), which may not call it", r.Method, r.URL.Path, role, callerOf(r.Context()).CertName)
	}
}
