package mail

import "crypto/x509"

// TrustRoots makes s trust the certificates in roots (a test server's).
func TrustRoots(s *SMTP, roots *x509.CertPool) { s.rootCAs = roots }
