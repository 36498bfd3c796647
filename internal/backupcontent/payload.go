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

// Package backupcontent is the format of what a backup holds: a MyApp's
// spec, its children and its DNS record, as the BackupConfig controller
// writes them and a Restore reads them. It is the controllers' content, not
// the wire's: the backup providers (internal/external/backup and its
// sibling packages) store and return it as bytes and never import it.
package backupcontent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// PayloadFormatVersion is the version of the content format EncodePayload
// writes and the only one DecodePayload reads. It changes whenever a reader
// of the old format would misread the new one (a field renamed, removed or
// given another meaning). A field added that an old reader could ignore
// changes it too: the decoder refuses unknown fields, so a restore never
// drops a part of a backup it does not understand without saying so.
const PayloadFormatVersion = 1

// MaxPayloadBytes bounds the encoded (gzip'd) content, as every provider
// bounds what a backup may hold (backup.MaxPayloadBytes). MaxDecodedBytes
// bounds what decoding may expand to, so a small object that unpacks to
// gigabytes cannot exhaust the operator's memory.
const (
	MaxPayloadBytes = backup.MaxPayloadBytes
	MaxDecodedBytes = 16 << 20
)

// PayloadTooLargeError is the error EncodePayload returns for a payload
// whose encoding is larger than MaxPayloadBytes: no provider would store
// it, and the controller says so rather than skip the backup.
type PayloadTooLargeError struct {
	// Size is the encoded (gzip'd) size in bytes.
	Size int
}

func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("backup content is %d bytes gzip'd, more than the %d a backup may hold", e.Size, MaxPayloadBytes)
}

// ErrUnsupportedFormat is matched (errors.Is) by the error DecodePayload
// returns for content whose formatVersion this operator does not read:
// written by a newer operator, or not a backup of this project at all.
var ErrUnsupportedFormat = errors.New("unsupported backup content format")

// FormatError is the error DecodePayload returns for content it does not
// read. It names the version found, so a condition can tell a person which
// operator wrote the backup.
type FormatError struct {
	// Version is the formatVersion the content declares, 0 when it declares
	// none.
	Version int
}

func (e *FormatError) Error() string {
	if e.Version == 0 {
		return fmt.Sprintf("%v: the content declares no formatVersion (want %d)", ErrUnsupportedFormat, PayloadFormatVersion)
	}
	return fmt.Sprintf("%v: formatVersion %d, this operator reads %d; restore it with the operator version that wrote it or a newer one",
		ErrUnsupportedFormat, e.Version, PayloadFormatVersion)
}

// Is makes every FormatError match ErrUnsupportedFormat.
func (e *FormatError) Is(target error) bool { return target == ErrUnsupportedFormat }

// Payload is what one backup holds: the MyApp as it was, the children the
// operator rendered for it, the DNS record it held, and where the backup
// came from. A restore reads it back with DecodePayload (issue 34); the
// format is described in docs/external-services.md.
type Payload struct {
	// FormatVersion names the format; EncodePayload sets it.
	FormatVersion int `json:"formatVersion"`
	// Metadata says which BackupConfig took the backup, why and when.
	Metadata PayloadMetadata `json:"metadata"`
	// MyApp is the MyApp as it was, without status or UID: what a restore
	// creates again.
	MyApp AppSnapshot `json:"myApp"`
	// Children are the objects the operator renders for the MyApp
	// (Deployment, Service, Ingress), without status or server-set
	// metadata. They are kept for people and for comparing; a restore does
	// not create them, the MyApp controller renders them again.
	Children []unstructured.Unstructured `json:"children"`
	// DNSRecord is the record the MyApp held, nil when it held none.
	DNSRecord *DNSRecordSnapshot `json:"dnsRecord,omitempty"`
}

// PayloadMetadata is where a backup came from.
type PayloadMetadata struct {
	// Trigger is why the backup was started: Schedule, AppChange,
	// AppDeletion or Manual.
	Trigger string `json:"trigger"`
	// MyAppUID and MyAppGeneration identify the MyApp and the generation of
	// it that was backed up, metadata.generation as read: for a MyApp whose
	// deletion had begun, one past its last spec change, since the API
	// server raises the generation when a deletion begins. The UID is what
	// a restore hands the DNS record over from.
	MyAppUID        string `json:"myAppUID"`
	MyAppGeneration int64  `json:"myAppGeneration"`
	// TakenAt is when the controller read the MyApp for this backup.
	TakenAt time.Time `json:"takenAt"`
	// BackupConfig is the BackupConfig that took the backup.
	BackupConfig ObjectIdentity `json:"backupConfig"`
	// OwnerID is the installation's owner ID (--owner-id), the first part of
	// every DNS record owner it writes; a restore in a rebuilt cluster needs
	// it to take the record over.
	OwnerID string `json:"ownerID"`
	// Owner is the backup's owner in the backup service, such as
	// "backupconfig/<uid>".
	Owner string `json:"owner"`
	// IdempotencyKey is the key the backup was started with.
	IdempotencyKey string `json:"idempotencyKey"`
}

// ObjectIdentity names a Kubernetes object and the incarnation of it.
type ObjectIdentity struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// AppSnapshot is a MyApp without what the API server gives every object: no
// UID, resource version, generation, timestamps, owner references or
// status.
type AppSnapshot struct {
	// APIVersion and Kind say which API the spec is of, so a later API
	// version can convert it.
	APIVersion  string                 `json:"apiVersion"`
	Kind        string                 `json:"kind"`
	Namespace   string                 `json:"namespace"`
	Name        string                 `json:"name"`
	Labels      map[string]string      `json:"labels,omitempty"`
	Annotations map[string]string      `json:"annotations,omitempty"`
	Spec        appsv1alpha1.MyAppSpec `json:"spec"`
}

// DNSRecordSnapshot is the DNS record a MyApp held when it was backed up.
type DNSRecordSnapshot struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
	// TTL is in seconds; 0 when the record's TTL was not known.
	TTL int32 `json:"ttl,omitempty"`
	// Owner is the record's owner in the DNS service, such as
	// "<owner-id>/<namespace>/<name>/<uid>".
	Owner string `json:"owner"`
}

// SnapshotApp takes the parts of app a backup keeps. The maps are copied,
// so the snapshot does not change with the object.
func SnapshotApp(app *appsv1alpha1.MyApp) AppSnapshot {
	return AppSnapshot{
		APIVersion:  appsv1alpha1.GroupVersion.String(),
		Kind:        "MyApp",
		Namespace:   app.Namespace,
		Name:        app.Name,
		Labels:      maps.Clone(app.Labels),
		Annotations: maps.Clone(app.Annotations),
		Spec:        *app.Spec.DeepCopy(),
	}
}

// NewChild converts a rendered child object into the form a payload keeps:
// with apiVersion and kind (looked up in scheme when the object does not
// carry them), and without status or the metadata the API server sets, so a
// child read back from the cluster stores the same as one just rendered.
func NewChild(scheme *runtime.Scheme, obj runtime.Object) (unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return unstructured.Unstructured{}, fmt.Errorf("backup child: %w", err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return unstructured.Unstructured{}, fmt.Errorf("backup child %s: %w", gvk.Kind, err)
	}
	u := unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	delete(u.Object, "status")
	for _, field := range []string{"uid", "resourceVersion", "generation", "creationTimestamp",
		"managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", field)
	}
	return u, nil
}

// Validate reports the first thing that makes p unusable for a restore.
func (p *Payload) Validate() error {
	if err := p.Metadata.validate(); err != nil {
		return err
	}
	switch {
	case p.MyApp.APIVersion == "" || p.MyApp.Kind == "":
		return errors.New("myApp needs apiVersion and kind")
	case p.MyApp.Namespace == "" || p.MyApp.Name == "":
		return errors.New("myApp needs namespace and name")
	case p.MyApp.Namespace != p.Metadata.BackupConfig.Namespace:
		return fmt.Errorf("myApp is in namespace %q, its BackupConfig in %q", p.MyApp.Namespace, p.Metadata.BackupConfig.Namespace)
	}
	for i := range p.Children {
		c := &p.Children[i]
		if c.GetAPIVersion() == "" || c.GetKind() == "" || c.GetName() == "" {
			return fmt.Errorf("children[%d] needs apiVersion, kind and metadata.name", i)
		}
	}
	if r := p.DNSRecord; r != nil && (r.Name == "" || r.Type == "" || r.Value == "" || r.Owner == "") {
		return errors.New("dnsRecord needs name, type, value and owner")
	}
	return nil
}

// validate reports the first field of the metadata a restore needs that
// is missing.
func (m *PayloadMetadata) validate() error {
	switch {
	case m.Trigger == "":
		return errors.New("metadata.trigger is required")
	case m.MyAppUID == "":
		return errors.New("metadata.myAppUID is required")
	case m.TakenAt.IsZero():
		return errors.New("metadata.takenAt is required")
	case m.BackupConfig.Namespace == "" || m.BackupConfig.Name == "" || m.BackupConfig.UID == "":
		return errors.New("metadata.backupConfig needs namespace, name and uid")
	case m.OwnerID == "":
		return errors.New("metadata.ownerID is required")
	case m.Owner == "":
		return errors.New("metadata.owner is required")
	case m.IdempotencyKey == "":
		return errors.New("metadata.idempotencyKey is required")
	}
	return nil
}

// EncodePayload validates p and returns it as gzip'd JSON in the current
// format. The gzip header carries no name or time, so the same payload
// always encodes to the same bytes. A payload that encodes to more than
// MaxPayloadBytes is a *PayloadTooLargeError.
func EncodePayload(p *Payload) ([]byte, error) {
	out := *p
	out.FormatVersion = PayloadFormatVersion
	if out.Children == nil {
		// Written as [] rather than null, so a reader never has to tell "no
		// children" from "children not recorded".
		out.Children = []unstructured.Unstructured{}
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("backup content: %w", err)
	}
	raw, err := json.Marshal(&out)
	if err != nil {
		return nil, fmt.Errorf("backup content: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > MaxPayloadBytes {
		return nil, &PayloadTooLargeError{Size: buf.Len()}
	}
	return buf.Bytes(), nil
}

// DecodePayload reads content written by EncodePayload. Content of another
// format version is a *FormatError (errors.Is ErrUnsupportedFormat) and is
// never half read; content that is not gzip'd JSON, has fields this format
// does not have, or fails Validate is an error saying what is wrong.
func DecodePayload(data []byte) (*Payload, error) {
	if len(data) > MaxPayloadBytes {
		return nil, fmt.Errorf("backup content is %d bytes, more than the %d a backup may hold", len(data), MaxPayloadBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("backup content is not gzip'd: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxDecodedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("backup content: gunzip: %w", err)
	}
	if len(raw) > MaxDecodedBytes {
		return nil, fmt.Errorf("backup content unpacks to more than %d bytes", MaxDecodedBytes)
	}
	// The version is read on its own first, so content of another version
	// is refused by its version, not by whichever field happens to differ.
	var probe struct {
		FormatVersion json.RawMessage `json:"formatVersion"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("backup content is not a JSON object: %w", err)
	}
	var version int
	if len(probe.FormatVersion) > 0 {
		if err := json.Unmarshal(probe.FormatVersion, &version); err != nil {
			return nil, fmt.Errorf("backup content: formatVersion %s is not an integer", probe.FormatVersion)
		}
	}
	if version != PayloadFormatVersion {
		return nil, &FormatError{Version: version}
	}
	var p Payload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	// The probe above has refused anything after the object already.
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("backup content of format %d: %w", version, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("backup content: %w", err)
	}
	return &p, nil
}

// Identity decodes data as DecodePayload does and returns what its metadata
// says of whose backup it is: the backup.ContentReader of this format.
func Identity(data []byte) (backup.ContentIdentity, error) {
	p, err := DecodePayload(data)
	if err != nil {
		return backup.ContentIdentity{}, err
	}
	m := p.Metadata
	return backup.ContentIdentity{
		Owner: m.Owner, IdempotencyKey: m.IdempotencyKey, OwnerID: m.OwnerID,
		BackupConfigNamespace: m.BackupConfig.Namespace, BackupConfigName: m.BackupConfig.Name,
		BackupConfigUID: m.BackupConfig.UID,
	}, nil
}
