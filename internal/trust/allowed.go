package trust

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// allowed_signers, as ssh-keygen(1) reads it (sshsig.c
// parse_principals_key_and_options, sshsigopt_parse): one key per line,
//
//	principals [options] keytype base64-key [comment]
//
// principals a comma-separated list of names or patterns (a leading '"'
// quotes the field); options a comma-separated list of cert-authority,
// namespaces="pattern-list", valid-after="time", valid-before="time" (time
// YYYYMMDD[HHMM[SS]], UTC with a trailing Z, else local time). Blank lines
// and lines starting with '#' are skipped. A malformed line is an error
// (ssh-keygen stops at one too); a line whose key is not Ed25519 is read and
// never matches.

const maxAllowedSigners = 4 << 20

// AllowedSigners is a parsed allowed_signers file.
type AllowedSigners struct {
	entries []signerEntry
}

type signerEntry struct {
	line                    int
	principals              string
	ca                      bool
	namespaces              *string // nil: any namespace
	validAfter, validBefore time.Time
	keyType                 string
	pub                     ed25519.PublicKey // nil unless keyType is ssh-ed25519
}

// knownKeyTypes are the key type names OpenSSH reads (sshkey.c keyimpls);
// a first token not in the list is read as options.
var knownKeyTypes = map[string]bool{
	"ssh-ed25519": true, "ssh-rsa": true, "ssh-dss": true,
	"ecdsa-sha2-nistp256": true, "ecdsa-sha2-nistp384": true, "ecdsa-sha2-nistp521": true,
	"sk-ecdsa-sha2-nistp256@openssh.com": true, "sk-ssh-ed25519@openssh.com": true,
	"ssh-xmss@openssh.com": true,
}

func isKeyType(t string) bool {
	if knownKeyTypes[t] {
		return true
	}
	base, ok := strings.CutSuffix(t, "-cert-v01@openssh.com")
	return ok && (knownKeyTypes[base] || knownKeyTypes[base+"@openssh.com"] || base == "sk-ecdsa-sha2-nistp256" || base == "sk-ssh-ed25519" || base == "ssh-xmss")
}

// ParseAllowedSigners parses the contents of an allowed_signers file.
func ParseAllowedSigners(b []byte) (*AllowedSigners, error) {
	if len(b) > maxAllowedSigners {
		return nil, fmt.Errorf("%w: %d bytes is too large", ErrAllowedSigner, len(b))
	}
	as := &AllowedSigners{}
	for n, line := range bytes.Split(b, []byte("\n")) {
		e, skip, err := parseSignerLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrAllowedSigner, n+1, err)
		}
		if skip {
			continue
		}
		e.line = n + 1
		as.entries = append(as.entries, e)
	}
	return as, nil
}

const spaces = " \t\r\n"

func parseSignerLine(line string) (e signerEntry, skip bool, err error) {
	cp := strings.TrimLeft(line, spaces)
	if cp == "" || cp[0] == '#' {
		return e, true, nil
	}
	// principals: quoted, or up to whitespace
	if cp[0] == '"' {
		end := strings.IndexByte(cp[1:], '"')
		if end < 0 {
			return e, false, fmt.Errorf("unterminated quote in the principals")
		}
		e.principals, cp = cp[1:1+end], cp[2+end:]
	} else {
		i := strings.IndexAny(cp, spaces)
		if i < 0 {
			return e, false, fmt.Errorf("a principals field and nothing else")
		}
		e.principals, cp = cp[:i], cp[i:]
	}
	if e.principals == "" {
		return e, false, fmt.Errorf("empty principals")
	}
	cp = strings.TrimLeft(cp, spaces)
	if cp == "" {
		return e, false, fmt.Errorf("missing key")
	}
	tok := cp
	if i := strings.IndexAny(cp, spaces); i >= 0 {
		tok = cp[:i]
	}
	if !isKeyType(tok) {
		// options, up to unquoted whitespace
		quoted, i := false, 0
		for ; i < len(cp) && (quoted || (cp[i] != ' ' && cp[i] != '\t')); i++ {
			if cp[i] == '\\' && i+1 < len(cp) && cp[i+1] == '"' {
				i++
			} else if cp[i] == '"' {
				quoted = !quoted
			}
		}
		if quoted {
			return e, false, fmt.Errorf("unterminated quote in the options")
		}
		if err := e.parseOptions(cp[:i]); err != nil {
			return e, false, fmt.Errorf("bad options: %v", err)
		}
		cp = strings.TrimLeft(cp[i:], spaces)
		if cp == "" {
			return e, false, fmt.Errorf("missing key")
		}
	}
	fields := strings.Fields(cp)
	if len(fields) < 2 || !isKeyType(fields[0]) {
		return e, false, fmt.Errorf("invalid key (want keytype base64-key)")
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return e, false, fmt.Errorf("invalid key: base64: %v", err)
	}
	r := &reader{b: blob}
	if t := string(r.string()); r.err != nil || t != fields[0] {
		return e, false, fmt.Errorf("invalid key: type %q does not match its data", printable(fields[0]))
	}
	e.keyType = fields[0]
	if e.keyType == KeyType {
		if e.pub, err = parsePublicKeyBlob(blob); err != nil {
			return e, false, fmt.Errorf("invalid key: %v", err)
		}
	}
	return e, false, nil
}

// parseOptions reads sshsigopt_parse's options.
func (e *signerEntry) parseOptions(opts string) error {
	for opts != "" {
		switch {
		case hasPrefixFold(opts, "cert-authority"):
			e.ca = true
			opts = opts[len("cert-authority"):]
		case hasPrefixFold(opts, "namespaces="):
			if e.namespaces != nil {
				return fmt.Errorf("multiple \"namespaces\" clauses")
			}
			v, rest, err := dequote(opts[len("namespaces="):])
			if err != nil {
				return err
			}
			e.namespaces, opts = &v, rest
		case hasPrefixFold(opts, "valid-after="), hasPrefixFold(opts, "valid-before="):
			name, t := "valid-after", &e.validAfter
			if hasPrefixFold(opts, "valid-before=") {
				name, t = "valid-before", &e.validBefore
			}
			if !t.IsZero() {
				return fmt.Errorf("multiple %q clauses", name)
			}
			v, rest, err := dequote(opts[len(name)+1:])
			if err != nil {
				return err
			}
			if *t, err = parseAbsoluteTime(v); err != nil {
				return fmt.Errorf("invalid %q time %q", name, printable(v))
			}
			opts = rest
		}
		if opts == "" {
			break
		}
		if opts[0] != ',' {
			return fmt.Errorf("unknown key option %q", printable(opts))
		}
		opts = opts[1:]
		if opts == "" {
			return fmt.Errorf("unexpected end of options")
		}
	}
	if !e.validAfter.IsZero() && !e.validBefore.IsZero() && !e.validBefore.After(e.validAfter) {
		return fmt.Errorf("\"valid-before\" time is before \"valid-after\"")
	}
	return nil
}

// hasPrefixFold is strncasecmp(s, prefix, len(prefix)) == 0 for an ASCII
// prefix.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// dequote reads a "quoted" value (\" escapes a quote) at the start of s.
func dequote(s string) (val, rest string, err error) {
	if s == "" || s[0] != '"' {
		return "", "", fmt.Errorf("missing start quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case s[i] == '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", fmt.Errorf("missing end quote")
}

// parseAbsoluteTime reads YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, in UTC
// with a trailing "Z" or "UTC", else in local time (misc.c
// parse_absolute_time).
func parseAbsoluteTime(s string) (time.Time, error) {
	loc := time.Local
	if len(s) > 1 && (s[len(s)-1] == 'Z' || s[len(s)-1] == 'z') {
		loc, s = time.UTC, s[:len(s)-1]
	} else if len(s) > 3 && strings.EqualFold(s[len(s)-3:], "UTC") {
		loc, s = time.UTC, s[:len(s)-3]
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("not a time")
		}
	}
	var layout string
	switch len(s) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("not a time")
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil || t.Unix() <= 0 {
		return time.Time{}, fmt.Errorf("not a time")
	}
	return t, nil
}

// find returns the principals of the first line that allows pub for
// namespace at now; the error lists why the key's lines did not.
func (as *AllowedSigners) find(pub ed25519.PublicKey, namespace string, now time.Time) (string, error) {
	var why []string
	for _, e := range as.entries {
		if e.pub == nil || !e.pub.Equal(pub) {
			continue
		}
		switch {
		case e.ca:
			why = append(why, fmt.Sprintf("line %d: cert-authority (vouches for certificates only, which are not supported)", e.line))
		case e.namespaces != nil && matchPatternList(namespace, *e.namespaces) != 1:
			why = append(why, fmt.Sprintf("line %d: not allowed for namespace %q (namespaces=%q)", e.line, namespace, printable(*e.namespaces)))
		case !e.validAfter.IsZero() && now.Before(e.validAfter):
			why = append(why, fmt.Sprintf("line %d: not valid before %s", e.line, e.validAfter.Format(time.RFC3339)))
		case !e.validBefore.IsZero() && now.After(e.validBefore):
			why = append(why, fmt.Sprintf("line %d: expired at %s", e.line, e.validBefore.Format(time.RFC3339)))
		default:
			return e.principals, nil
		}
	}
	if len(why) == 0 {
		return "", fmt.Errorf("%w: key %s is not in the allowed signers file", ErrUntrustedKey, Fingerprint(pub))
	}
	return "", fmt.Errorf("%w: key %s: %s", ErrUntrustedKey, Fingerprint(pub), strings.Join(why, "; "))
}

// matchPatternList is OpenSSH's match_pattern_list: 1 if s matches a
// pattern of the comma-separated list, -1 if it matches a negated (!)
// one, else 0.
func matchPatternList(s, list string) int {
	got := 0
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if len(p) >= 1023 {
			return 0
		}
		if matchPattern(s, p) {
			if neg {
				return -1
			}
			got = 1
		}
	}
	return got
}

// matchPattern matches s against a glob of '*' (any run) and '?' (one
// byte), in time O(len(s)*len(p)) at worst.
func matchPattern(s, p string) bool {
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
