package tunneltest

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// The RBAC documented in docs/tunnel.md, which the tests grant and nothing
// more, so that a missing permission fails a test instead of a rollout.
var (
	// CSRRequesterRules let a side request its certificates: create its
	// CSRs, then get, list and watch them until they are issued (client-go
	// watches one CSR with a metadata.name field selector).
	CSRRequesterRules = []rbacv1.PolicyRule{{
		APIGroups: []string{"certificates.k8s.io"},
		Resources: []string{"certificatesigningrequests"},
		Verbs:     []string{"create", "get", "list", "watch"},
	}}
	// LeaseRules let a server replica hold its Lease and count the others
	// (delete: its own on exit, and those of crashed replicas).
	LeaseRules = []rbacv1.PolicyRule{{
		APIGroups: []string{"coordination.k8s.io"},
		Resources: []string{"leases"},
		Verbs:     []string{"get", "list", "create", "update", "delete"},
	}}
)

// GrantClusterRole creates ClusterRole name with rules, bound to the
// ServiceAccounts namespace/sa..., and waits until the first account is
// allowed rules[0] (RBAC reaches the authorizer through an informer).
func GrantClusterRole(ctx context.Context, admin kubernetes.Interface, name string, rules []rbacv1.PolicyRule, namespace string, sas ...string) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create cluster role %s: %w", name, err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
	for _, sa := range sas {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa})
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create cluster role binding %s: %w", name, err)
	}
	return waitAllowed(ctx, admin, "system:serviceaccount:"+namespace+":"+sas[0], "", rules[0])
}

// GrantRole is GrantClusterRole for a Role in namespace.
func GrantRole(ctx context.Context, admin kubernetes.Interface, name string, rules []rbacv1.PolicyRule, namespace string, sas ...string) error {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: rules}
	if _, err := admin.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create role %s: %w", name, err)
	}
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
	for _, sa := range sas {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa})
	}
	if _, err := admin.RbacV1().RoleBindings(namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create role binding %s: %w", name, err)
	}
	return waitAllowed(ctx, admin, "system:serviceaccount:"+namespace+":"+sas[0], namespace, rules[0])
}

// waitAllowed polls a SubjectAccessReview until user may do every verb of
// rule, for up to 10 s.
func waitAllowed(ctx context.Context, admin kubernetes.Interface, user, namespace string, rule rbacv1.PolicyRule) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, verb := range rule.Verbs {
			ok, err := allowed(ctx, admin, user, namespace, verb, rule.APIGroups[0], rule.Resources[0])
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
}

func allowed(ctx context.Context, admin kubernetes.Interface, user, namespace, verb, group, resource string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource},
	}}
	res, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("access review: %w", err)
	}
	return res.Status.Allowed, nil
}
