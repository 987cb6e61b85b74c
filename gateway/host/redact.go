package host

import (
	"net/url"
	"strings"
)

// Redacted replaces the value of a credential-like query or fragment
// parameter in URL provenance.
const Redacted = "REDACTED"

// credentialNames are parameter names whose values are secrets more often
// than not, compared lower-case with '-' read as '_'.
var credentialNames = map[string]bool{
	"token": true, "access_token": true, "refresh_token": true, "id_token": true, "auth_token": true,
	"api_key": true, "apikey": true, "key": true, "secret": true, "client_secret": true,
	"password": true, "passwd": true, "pwd": true, "pass": true,
	"auth": true, "authorization": true, "credential": true, "credentials": true,
	"signature": true, "sig": true, "session": true, "sessionid": true, "session_id": true, "sid": true,
	"code": true, "jwt": true, "bearer": true, "otp": true,
	"x_amz_signature": true, "x_amz_credential": true, "x_amz_security_token": true,
	"x_goog_signature": true, "x_goog_credential": true,
}

// credentialLike reports whether a parameter name reads as a secret's:
// one of credentialNames, or a name ending in one of the obvious suffixes.
func credentialLike(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if credentialNames[n] {
		return true
	}
	for _, suffix := range []string{"_token", "_key", "_secret", "_password", "_signature", "_sig"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// RedactURL returns raw with user information dropped and the values of
// credential-like query and fragment parameters replaced by REDACTED. A
// string that is not a URL is returned as "" rather than risk leaking it.
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User = nil
	u.RawQuery = redactParams(u.RawQuery)
	if u.Fragment != "" && strings.Contains(u.Fragment, "=") {
		// OAuth's implicit flow puts tokens in the fragment.
		u.Fragment = redactParams(u.Fragment)
		u.RawFragment = ""
	}
	return u.String()
}

// redactParams rewrites a query string in place, keeping its order and
// every parameter it does not redact byte for byte.
func redactParams(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		decoded, err := url.QueryUnescape(name)
		if err != nil {
			decoded = name
		}
		if hasValue && credentialLike(decoded) {
			parts[i] = name + "=" + Redacted
		}
	}
	return strings.Join(parts, "&")
}
