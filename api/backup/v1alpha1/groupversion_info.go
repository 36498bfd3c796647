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

// Package v1alpha1 contains the BackupConfig and Restore API of the
// backup.myapp.dev group.
// +kubebuilder:object:generate=true
// +groupName=backup.myapp.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The registration follows k8s.io/api rather than controller-runtime's
// deprecated scheme.Builder, so importing this package pulls in nothing but
// apimachinery.
var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "backup.myapp.dev", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this group-version's
	// types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers BackupConfig, Restore and their lists, and the
// meta types (options, status, watch events) every group-version needs.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &BackupConfig{}, &BackupConfigList{}, &Restore{}, &RestoreList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
