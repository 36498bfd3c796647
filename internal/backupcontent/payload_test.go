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

package backupcontent_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
)

// testApp is a MyApp as the API server returns it: with a UID, a resource
// version, status and server-set metadata that a backup must not keep.
func testApp() *appsv1alpha1.MyApp {
	return &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web", UID: "app-uid-1", ResourceVersion: "42", Generation: 3,
			Labels:            map[string]string{"team": "checkout"},
			Annotations:       map[string]string{"note": "keep"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		},
		Spec: appsv1alpha1.MyAppSpec{
			Replicas: ptr.To[int32](2), Image: "nginx:1.27", ContainerPort: 8080, ServicePort: 80,
			Host: "web.example.com", DeletionPolicy: appsv1alpha1.DeletionPolicy("Orphan"),
			Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
		},
		Status: appsv1alpha1.MyAppStatus{ObservedGeneration: 3},
	}
}

// testPayload is a payload as the controller will build it.
func testPayload(t testing.TB) *backupcontent.Payload {
	t.Helper()
	app := testApp()
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "deploy-uid", ResourceVersion: "7"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2},
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	children := make([]unstructured.Unstructured, 0, 2)
	for _, obj := range []runtime.Object{deploy, svc} {
		c, err := backupcontent.NewChild(clientgoscheme.Scheme, obj)
		if err != nil {
			t.Fatal(err)
		}
		children = append(children, c)
	}
	return &backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "AppChange", MyAppUID: string(app.UID), MyAppGeneration: app.Generation,
			TakenAt:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: "shop", Name: "nightly", UID: "bc-uid-1"},
			OwnerID:      "cluster-a", Owner: "backupconfig/bc-uid-1",
			IdempotencyKey: "backupconfig/bc-uid-1/change/app-uid-1/3",
		},
		MyApp:    backupcontent.SnapshotApp(app),
		Children: children,
		DNSRecord: &backupcontent.DNSRecordSnapshot{
			Name: "web.example.com", Type: "CNAME", Value: "lb.example.com", TTL: 60,
			Owner: "cluster-a/shop/web/app-uid-1",
		},
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	g := NewWithT(t)
	p := testPayload(t)
	data, err := backupcontent.EncodePayload(p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(data[:2]).To(Equal([]byte{0x1f, 0x8b}), "gzip magic")

	got, err := backupcontent.DecodePayload(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.FormatVersion).To(Equal(backupcontent.PayloadFormatVersion))
	g.Expect(got.Metadata).To(Equal(p.Metadata))
	g.Expect(got.MyApp.Spec.Image).To(Equal("nginx:1.27"))
	g.Expect(got.MyApp.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
	g.Expect(got.MyApp.Spec.Resources.Limits.Memory().String()).To(Equal("256Mi"))
	g.Expect(got.MyApp.Spec.Env).To(Equal(p.MyApp.Spec.Env))
	g.Expect(got.MyApp.Labels).To(Equal(map[string]string{"team": "checkout"}))
	g.Expect(got.MyApp.Annotations).To(Equal(map[string]string{"note": "keep"}))
	g.Expect(got.DNSRecord).To(Equal(p.DNSRecord))
	g.Expect(got.Children).To(HaveLen(2))
	g.Expect(got.Children[0].GetKind()).To(Equal("Deployment"))
	g.Expect(got.Children[0].GetAPIVersion()).To(Equal("apps/v1"))
	g.Expect(got.Children[1].GetKind()).To(Equal("Service"))

	again, err := backupcontent.EncodePayload(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(data), "the same payload encodes to the same bytes")
}

// TestPayloadKeepsNoIdentityOrStatus: what a restore creates must not carry
// the old object's UID or status, or the API server and the controllers
// would take it for the object that is gone.
func TestPayloadKeepsNoIdentityOrStatus(t *testing.T) {
	g := NewWithT(t)
	data, err := backupcontent.EncodePayload(testPayload(t))
	g.Expect(err).NotTo(HaveOccurred())
	raw := gunzip(t, data)
	for _, leaked := range []string{`"uid":"deploy-uid"`, `"resourceVersion"`,
		`"status"`, `"readyReplicas"`, `"creationTimestamp":"2026`, `"observedGeneration"`} {
		g.Expect(raw).NotTo(ContainSubstring(leaked))
	}
	var doc map[string]any
	g.Expect(json.Unmarshal([]byte(raw), &doc)).To(Succeed())
	g.Expect(doc["myApp"]).NotTo(HaveKey("uid"))
	g.Expect(doc["myApp"]).NotTo(HaveKey("status"))
	g.Expect(doc).To(HaveKeyWithValue("formatVersion", BeEquivalentTo(1)))
}

func TestDecodePayloadRefusesOtherVersions(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(doc map[string]any)
		version int
	}{
		{name: "a newer format", mutate: func(d map[string]any) { d["formatVersion"] = 2 }, version: 2},
		{name: "no version", mutate: func(d map[string]any) { delete(d, "formatVersion") }, version: 0},
		{name: "version zero", mutate: func(d map[string]any) { d["formatVersion"] = 0 }, version: 0},
		{
			// A newer format would also differ in its fields; the version
			// must be what the error names, not the first odd field.
			name: "a newer format with new fields",
			mutate: func(d map[string]any) {
				d["formatVersion"] = 7
				d["volumes"] = []any{}
			},
			version: 7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			data := rewrite(t, testPayload(t), tt.mutate)
			_, err := backupcontent.DecodePayload(data)
			g.Expect(err).To(MatchError(backupcontent.ErrUnsupportedFormat))
			var fe *backupcontent.FormatError
			g.Expect(errors.As(err, &fe)).To(BeTrue())
			g.Expect(fe.Version).To(Equal(tt.version))
		})
	}
}

func TestDecodePayloadRefusesBadContent(t *testing.T) {
	good := testPayload(t)
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want string
	}{
		{name: "not gzip", data: func(*testing.T) []byte { return []byte(`{"formatVersion":1}`) }, want: "not gzip'd"},
		{name: "not JSON", data: func(t *testing.T) []byte { return gzipBytes(t, []byte("<xml/>")) }, want: "not a JSON object"},
		{
			name: "a version that is not a number",
			data: func(t *testing.T) []byte { return gzipBytes(t, []byte(`{"formatVersion":"1"}`)) },
			want: "not an integer",
		},
		{
			name: "an unknown field in format 1",
			data: func(t *testing.T) []byte {
				return rewrite(t, good, func(d map[string]any) { d["extra"] = true })
			},
			want: `unknown field "extra"`,
		},
		{
			name: "an unknown field in the spec",
			data: func(t *testing.T) []byte {
				return rewrite(t, good, func(d map[string]any) {
					d["myApp"].(map[string]any)["spec"].(map[string]any)["sidecars"] = 1
				})
			},
			want: `unknown field "sidecars"`,
		},
		{
			name: "a missing MyApp UID",
			data: func(t *testing.T) []byte {
				return rewrite(t, good, func(d map[string]any) { delete(d["metadata"].(map[string]any), "myAppUID") })
			},
			want: "metadata.myAppUID is required",
		},
		{
			name: "a child without a name",
			data: func(t *testing.T) []byte {
				return rewrite(t, good, func(d map[string]any) {
					delete(d["children"].([]any)[0].(map[string]any)["metadata"].(map[string]any), "name")
				})
			},
			want: "children[0] needs",
		},
		{
			name: "a payload that unpacks to too much",
			data: func(t *testing.T) []byte {
				return gzipBytes(t, append([]byte(`{"formatVersion":1,"pad":"`), bytes.Repeat([]byte("a"), backupcontent.MaxDecodedBytes)...))
			},
			want: "unpacks to more than",
		},
		{
			name: "trailing data",
			data: func(t *testing.T) []byte {
				raw := gunzip(t, mustEncode(t, good))
				return gzipBytes(t, []byte(raw+" {}"))
			},
			want: "after top-level value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := backupcontent.DecodePayload(tt.data(t))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.want))
			g.Expect(errors.Is(err, backupcontent.ErrUnsupportedFormat)).To(BeFalse(), "a bad payload of a known version is not an unknown version")
		})
	}
}

func TestEncodePayloadValidates(t *testing.T) {
	g := NewWithT(t)
	p := testPayload(t)
	p.MyApp.Namespace = "elsewhere"
	_, err := backupcontent.EncodePayload(p)
	g.Expect(err).To(MatchError(ContainSubstring(`myApp is in namespace "elsewhere", its BackupConfig in "shop"`)))

	p = testPayload(t)
	p.DNSRecord.Owner = ""
	_, err = backupcontent.EncodePayload(p)
	g.Expect(err).To(MatchError(ContainSubstring("dnsRecord needs")))

	p = testPayload(t)
	p.DNSRecord, p.Children = nil, nil
	data, err := backupcontent.EncodePayload(p)
	g.Expect(err).NotTo(HaveOccurred(), "a MyApp without a record or children yet can be backed up")
	g.Expect(gunzip(t, data)).To(ContainSubstring(`"children":[]`))

	p = testPayload(t)
	// Random text, so gzip cannot shrink it under the limit.
	noise := make([]byte, 2*backupcontent.MaxPayloadBytes)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(noise)
	p.MyApp.Annotations = map[string]string{"big": base64.StdEncoding.EncodeToString(noise)}
	_, err = backupcontent.EncodePayload(p)
	g.Expect(err).To(MatchError(ContainSubstring("more than the")))
	var tooLarge *backupcontent.PayloadTooLargeError
	g.Expect(errors.As(err, &tooLarge)).To(BeTrue(), "a payload too large says so by its type: %v", err)
	g.Expect(tooLarge.Size).To(BeNumerically(">", backupcontent.MaxPayloadBytes))
}

func mustEncode(t testing.TB, p *backupcontent.Payload) []byte {
	t.Helper()
	data, err := backupcontent.EncodePayload(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rewrite encodes p, changes the JSON document with mutate, and gzips it
// again, for content no EncodePayload would write.
func rewrite(t testing.TB, p *backupcontent.Payload, mutate func(map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(gunzip(t, mustEncode(t, p))), &doc); err != nil {
		t.Fatal(err)
	}
	mutate(doc)
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return gzipBytes(t, raw)
}

func gzipBytes(t testing.TB, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t testing.TB, data []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
