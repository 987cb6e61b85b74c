// Package weburl resolves the URLs a page writes against its base, the way
// a browser does, and filters them by scheme.
package weburl

import (
	"net/url"
	"strings"
)

// urlControls are what browsers drop inside URLs. A Replacer builds its
// tables on first use, which cost more than the replacing: it is built once.
var urlControls = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// Resolve returns ref made absolute against base, when its scheme is one of
// schemes. Browsers drop tabs and line breaks inside URLs and trim the
// surrounding space, so Resolve does too. An http(s) URL without a host is
// refused.
func Resolve(base *url.URL, ref string, schemes ...string) (string, bool) {
	ref = strings.TrimSpace(urlControls.Replace(ref))
	if ref == "" {
		return "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	scheme := strings.ToLower(u.Scheme)
	allowed := false
	for _, s := range schemes {
		if scheme == s {
			allowed = true
			break
		}
	}
	if !allowed || ((scheme == "http" || scheme == "https") && u.Host == "") {
		return "", false
	}
	return u.String(), true
}
