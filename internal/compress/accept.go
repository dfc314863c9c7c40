package compress

import "bytes"

// AcceptQ returns the weight, in thousandths, that an Accept-Encoding value
// gives coding (or its alias), named or through "*"; 0 means not acceptable.
func AcceptQ(ae []byte, coding, alias string) int {
	star := 0
	for len(ae) > 0 {
		var elem []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			elem, ae = ae[:i], ae[i+1:]
		} else {
			elem, ae = ae, nil
		}
		name, params, _ := bytes.Cut(elem, []byte(";"))
		name = bytes.TrimSpace(name)
		q := 1000
		for len(params) > 0 {
			var p []byte
			p, params, _ = bytes.Cut(params, []byte(";"))
			k, v, _ := bytes.Cut(bytes.TrimSpace(p), []byte("="))
			if bytes.EqualFold(bytes.TrimSpace(k), []byte("q")) {
				q = qvalue(bytes.TrimSpace(v))
			}
		}
		switch {
		case bytes.EqualFold(name, []byte(coding)), alias != "" && bytes.EqualFold(name, []byte(alias)):
			return q
		case string(name) == "*":
			star = q
		}
	}
	return star
}

// qvalue parses "0", "0.5", "1.000" and the like; anything else counts as 0,
// so a coding the client may not want is never sent.
func qvalue(v []byte) int {
	if len(v) == 0 || (v[0] != '0' && v[0] != '1') || len(v) > 5 || len(v) > 1 && v[1] != '.' {
		return 0
	}
	q := int(v[0]-'0') * 1000
	scale := 100
	for _, c := range v[min(len(v), 2):] {
		if c < '0' || c > '9' {
			return 0
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0
	}
	return q
}
