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

package backupconfig

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// ChildRenderer renders the children the MyApp controller writes for a
// MyApp, from the MyApp alone (myapp.RenderChildren; cmd/manager sets it,
// so this package does not depend on the MyApp controller's).
type ChildRenderer func(app *appsv1alpha1.MyApp, ingressClassName string) []client.Object

// This file builds what a backup holds (backupcontent.Payload): the MyApp as the
// pass read it, the children the operator renders for it, the DNS record
// its status shows it holding, and where the backup came from. Everything
// comes from objects the pass already has (the BackupConfig and the MyApp
// from the cache, or the MyApp from the API server for a final backup), so
// the content costs no API call: rendering is pure, and the encoding is
// CPU only (JSON and gzip of a few KiB).

// contentTooLargeError is a backup whose content is larger than any
// provider stores: nothing is started, and the condition says what to do.
type contentTooLargeError struct {
	app  string
	size int
}

func (e *contentTooLargeError) Error() string {
	return fmt.Sprintf("a backup of MyApp %s would hold %d bytes gzip'd, more than the %d a backup may hold",
		e.app, e.size, backup.MaxPayloadBytes)
}

// backupContent encodes what the backup of s.app started by this pass with
// trigger and key holds.
func (r *Reconciler) backupContent(s *scope, trigger backupv1alpha1.BackupTrigger, key string) ([]byte, error) {
	app := s.app
	record := dnsRecordOf(app)
	p := &backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger:         string(trigger),
			MyAppUID:        string(app.UID),
			MyAppGeneration: app.Generation,
			TakenAt:         s.now.UTC(),
			BackupConfig:    backupcontent.ObjectIdentity{Namespace: s.bc.Namespace, Name: s.bc.Name, UID: string(s.bc.UID)},
			OwnerID:         r.OwnerID,
			Owner:           s.owner,
			IdempotencyKey:  key,
		},
		MyApp:     backupcontent.SnapshotApp(app),
		DNSRecord: record,
	}
	for _, child := range r.RenderChildren(app, r.IngressClassName) {
		// The rendered objects are of the built-in kinds, which the
		// client-go scheme names.
		c, err := backupcontent.NewChild(clientgoscheme.Scheme, child)
		if err != nil {
			return nil, err
		}
		p.Children = append(p.Children, c)
	}
	data, err := backupcontent.EncodePayload(p)
	var tooLarge *backupcontent.PayloadTooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &contentTooLargeError{app: app.Name, size: tooLarge.Size}
	}
	return data, err
}

// dnsRecordOf is the record app's status shows it holding, nil when it
// shows none, or not enough of one for a restore to take it over.
func dnsRecordOf(app *appsv1alpha1.MyApp) *backupcontent.DNSRecordSnapshot {
	st := app.Status.DNS
	if st == nil || st.Name == "" || st.Type == "" || st.Value == "" || st.Owner == "" {
		return nil
	}
	return &backupcontent.DNSRecordSnapshot{Name: st.Name, Type: st.Type, Value: st.Value, Owner: st.Owner}
}

// contentProblem records a backup that could not be started because its
// content is too large: the Ready condition says so (BackupContentTooLarge),
// a Warning event goes out when that trouble starts, and the pass ends with
// an error, so the same start is tried again with backoff. Nothing is
// skipped or counted as a failed backup: a schedule slot stays due and a
// change stays owed, and both are taken once the MyApp is smaller, which
// may come without a new generation (an annotation removed).
func (r *Reconciler) contentProblem(ctx context.Context, s *scope, err *contentTooLargeError) (ctrl.Result, error) {
	s.readiness.contentTooLarge = err
	ctrl.LoggerFrom(ctx).Info("Not starting a backup whose content is too large", "myapp", klog.KObj(s.app),
		"sizeBytes", err.size, "limitBytes", backup.MaxPayloadBytes)
	if s.readyWas != backupv1alpha1.BackupContentTooLargeReason {
		s.event(corev1.EventTypeWarning, eventBackupContentTooLarge, actionStartBackup, "%s. %s", capitalize(err.Error()),
			contentTooLargeAdvice)
	}
	return ctrl.Result{}, err
}

// contentTooLargeAdvice is the way out of a content too large.
const contentTooLargeAdvice = "Make the MyApp smaller: its spec, labels and annotations are backed up, and the " +
	"Deployment holds its spec's env again (a kubectl.kubernetes.io/last-applied-configuration annotation holds it " +
	"all once more; kubectl apply --server-side does not write it). No backup is started until it fits; the " +
	"operator tries again with backoff"
