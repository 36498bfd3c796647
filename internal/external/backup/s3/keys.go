/*
Copyright 2026 The myapp-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package s3

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The object layout. Every backup of an installation is one object under
//
//	<prefix>/<owner-id>/<namespace>/<backupconfig-uid>/<name>.json.gz
//
// where <name> is the backup's idempotency key without its owner
// ("backupconfig/<uid>/"), each of its '/'-separated segments escaped. A
// backup's ID is the key below <prefix>/<owner-id>/ without the suffix:
// "<namespace>/<backupconfig-uid>/<name>". So the ID says which owner a
// backup belongs to without a read, an installation never names an object
// outside its own prefix, and a rebuilt cluster with the same owner ID finds
// the same IDs by listing.
const (
	// ownerKind is how every owner the BackupConfig controller uses begins;
	// the rest of the owner is the BackupConfig's UID.
	ownerKind = "backupconfig/"
	// objectSuffix ends every backup object's key. No escaped segment can
	// contain a '.', so no directory of a file-system backed server (such
	// as versitygw's posix backend) ends in it, and an object never clashes
	// with a directory of the same name.
	objectSuffix = ".json.gz"
	// maxObjectKeyBytes is S3's limit on a key.
	maxObjectKeyBytes = 1024
)

// layout turns owners, keys and IDs into object keys under one
// installation's base, <prefix>/<owner-id>.
type layout struct {
	base string
}

// newLayout checks prefix and ownerID and returns their layout.
func newLayout(prefix, ownerID string) (layout, error) {
	if errs := validation.IsDNS1123Label(ownerID); len(errs) > 0 {
		return layout{}, fmt.Errorf("owner ID %q: %s", ownerID, strings.Join(errs, "; "))
	}
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return layout{base: ownerID}, nil
	}
	for seg := range strings.SplitSeq(prefix, "/") {
		if err := checkPrefixSegment(seg); err != nil {
			return layout{}, fmt.Errorf("prefix %q: %w", prefix, err)
		}
	}
	return layout{base: prefix + "/" + ownerID}, nil
}

// checkPrefixSegment allows the characters S3 documents as safe in a key
// and refuses the segments a file system would read as a path.
func checkPrefixSegment(seg string) error {
	if seg == "" || seg == "." || seg == ".." {
		return fmt.Errorf("segment %q is empty or a path step", seg)
	}
	for _, r := range seg {
		if !isUnreserved(r) && r != '.' {
			return fmt.Errorf("segment %q has character %q (use letters, digits, '-', '_' and '.')", seg, r)
		}
	}
	return nil
}

// ownerUID returns the BackupConfig UID an owner names.
func ownerUID(owner string) (string, error) {
	uid, ok := strings.CutPrefix(owner, ownerKind)
	if !ok {
		return "", fmt.Errorf("owner %q is not of a BackupConfig: the s3 provider files backups by BackupConfig, "+
			"and owners are %s<uid>", owner, ownerKind)
	}
	if err := checkUID(uid); err != nil {
		return "", err
	}
	return uid, nil
}

// checkNamespace and checkUID check a key segment that is a namespace or a
// BackupConfig's UID: a DNS-1123 label, which is what Kubernetes namespaces
// and UIDs are, and safe as a key segment.
func checkNamespace(namespace string) error { return checkLabel("namespace", namespace) }

func checkUID(uid string) error { return checkLabel("owner UID", uid) }

func checkLabel(what, value string) error {
	if errs := validation.IsDNS1123Label(value); len(errs) > 0 {
		return fmt.Errorf("%s %q: %s", what, value, strings.Join(errs, "; "))
	}
	return nil
}

// objectRef is a backup's place in the layout.
type objectRef struct {
	namespace string
	uid       string
	// name is the escaped rest of the idempotency key.
	name string
}

// refFor places the backup owner starts with key in namespace.
func refFor(namespace, owner, key string) (objectRef, error) {
	if err := checkNamespace(namespace); err != nil {
		return objectRef{}, err
	}
	uid, err := ownerUID(owner)
	if err != nil {
		return objectRef{}, err
	}
	rest, ok := strings.CutPrefix(key, owner+"/")
	if !ok {
		return objectRef{}, fmt.Errorf("idempotency key %q must begin with its owner %q and a '/': "+
			"the s3 provider files a backup under its owner", key, owner)
	}
	name, err := escapeName(rest)
	if err != nil {
		return objectRef{}, fmt.Errorf("idempotency key %q: %w", key, err)
	}
	return objectRef{namespace: namespace, uid: uid, name: name}, nil
}

// id is the backup's ID.
func (r objectRef) id() string { return r.namespace + "/" + r.uid + "/" + r.name }

// owner is the backup's owner.
func (r objectRef) owner() string { return ownerKind + r.uid }

// idempotencyKey is the key the backup was started with.
func (r objectRef) idempotencyKey() string {
	rest, err := unescapeName(r.name)
	if err != nil {
		// Every ref comes from refFor or parseID, which checked the name.
		panic(err)
	}
	return r.owner() + "/" + rest
}

// key is the object's key under base.
func (l layout) key(r objectRef) string { return l.base + "/" + r.id() + objectSuffix }

// ownerPrefix is the prefix every object of one owner's backups in one
// namespace begins with.
func (l layout) ownerPrefix(namespace, uid string) string {
	return l.base + "/" + namespace + "/" + uid + "/"
}

// namespacePrefix is the prefix every object of the backups of one
// namespace begins with, whatever their owner.
func (l layout) namespacePrefix(namespace string) string { return l.base + "/" + namespace + "/" }

// installationPrefix is the prefix every object of the installation begins
// with.
func (l layout) installationPrefix() string { return l.base + "/" }

// parseID reads a backup ID, refusing one that does not name a place in the
// layout, so no ID can reach outside the installation's prefix.
func parseID(id string) (objectRef, error) {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) != 3 {
		return objectRef{}, fmt.Errorf("backup ID %q is not <namespace>/<backupconfig-uid>/<name>", id)
	}
	r := objectRef{namespace: parts[0], uid: parts[1], name: parts[2]}
	if err := checkNamespace(r.namespace); err != nil {
		return objectRef{}, fmt.Errorf("backup ID %q: %w", id, err)
	}
	if err := checkUID(r.uid); err != nil {
		return objectRef{}, fmt.Errorf("backup ID %q: %w", id, err)
	}
	if _, err := unescapeName(r.name); err != nil {
		return objectRef{}, fmt.Errorf("backup ID %q: %w", id, err)
	}
	return r, nil
}

// parseKey reads an object key found under base back into its place, or
// reports false for an object that is not a backup of this layout.
func (l layout) parseKey(key string) (objectRef, bool) {
	rest, ok := strings.CutPrefix(key, l.base+"/")
	if !ok {
		return objectRef{}, false
	}
	id, ok := strings.CutSuffix(rest, objectSuffix)
	if !ok {
		return objectRef{}, false
	}
	r, err := parseID(id)
	return r, err == nil
}

// escapeName escapes each '/'-separated segment of an idempotency key's
// rest, so that any printable key maps to a key S3 servers and the file
// systems behind them store as it is: letters, digits, '-' and '_' stay,
// every other byte becomes %XX. The '/' separators stay, so the objects of
// one MyApp sit together when a person lists the bucket.
func escapeName(rest string) (string, error) {
	if rest == "" {
		return "", errors.New("nothing follows the owner")
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		if seg == "" {
			return "", errors.New("it has an empty segment (a '//' or a '/' at its end)")
		}
		var b strings.Builder
		for j := 0; j < len(seg); j++ {
			c := seg[j]
			if isUnreserved(rune(c)) {
				b.WriteByte(c)
				continue
			}
			fmt.Fprintf(&b, "%%%02X", c)
		}
		segs[i] = b.String()
	}
	return strings.Join(segs, "/"), nil
}

// unescapeName reverses escapeName and refuses what escapeName never
// writes, so every name has exactly one spelling.
func unescapeName(name string) (string, error) {
	if name == "" {
		return "", errors.New("the name is empty")
	}
	var b strings.Builder
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" {
			return "", fmt.Errorf("name %q has an empty segment", name)
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		for j := 0; j < len(seg); j++ {
			c := seg[j]
			switch {
			case isUnreserved(rune(c)):
				b.WriteByte(c)
			case c == '%' && j+2 < len(seg):
				v, ok := unhex(seg[j+1], seg[j+2])
				if !ok || isUnreserved(rune(v)) || v == '/' {
					return "", fmt.Errorf("name %q has an escape %q that is not written so", name, seg[j:j+3])
				}
				b.WriteByte(v)
				j += 2
			default:
				return "", fmt.Errorf("name %q has character %q", name, c)
			}
		}
	}
	return b.String(), nil
}

// isUnreserved reports the characters an escaped segment keeps as they are.
func isUnreserved(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// unhex reads two upper-case hex digits, the only spelling escapeName
// writes.
func unhex(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
