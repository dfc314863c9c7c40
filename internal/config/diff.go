package config

import (
	"reflect"
	"strings"
)

// Changed names the keys whose values differ between a and b, as the file
// spells them ("server.address", "pool.env"), in the order of Config's
// fields. A reload uses it to say which edits it could not apply; since it
// walks every field, a key added later is named too without being listed here.
func Changed(a, b *Config) []string {
	var out []string
	changed(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), "", &out)
	return out
}

func changed(a, b reflect.Value, prefix string, out *[]string) {
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		x, y := a.Field(i), b.Field(i)
		if x.Kind() == reflect.Struct {
			changed(x, y, key+".", out)
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			*out = append(*out, key)
		}
	}
}
