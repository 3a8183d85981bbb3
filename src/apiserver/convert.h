/*
 * convert.h: conversion of resource.k8s.io objects between the served
 * versions, on documents: v1beta2 and v1 have the same shape (only
 * apiVersion changes); v1beta1 keeps a device's fields under `basic` and
 * a request's fields flat instead of under `exactly`, as upstream's
 * conversion functions (pkg/apis/resource/v1beta1/conversion.go) map
 * them. drad stores v1 and converts on the way in and out.
 *
 * Owner: helper "apilib" (src/apiserver/convert.[ch]).
 *
 * Memory: the result is a new tree in the caller's arena; the input is
 * only read. Members the conversion does not know are carried over
 * unchanged, so a round trip loses nothing.
 */
#ifndef DRA_APISERVER_CONVERT_H
#define DRA_APISERVER_CONVERT_H

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"

/* Converts |obj| (a DeviceClass, ResourceClaim, ResourceClaimTemplate or
 * ResourceSlice, or a <Kind>List of them, whose apiVersion names its
 * version) to resource.k8s.io/|to_version| (v1, v1beta2 or v1beta1).
 * List items without apiVersion/kind take the list's. Objects already in
 * |to_version| come back as a copy. Errors: DRA_EINVAL for a document
 * that is not a resource.k8s.io object of these kinds, or a version not
 * served (|st|: 400 BadRequest, with upstream's wording for an unknown
 * version: no kind "X" is registered for version "resource.k8s.io/v9");
 * DRA_ENOMEM. */
dra_err api_conv_convert(dra_arena *a, const dra_doc *obj, const char *to_version,
                         dra_doc **out, dra_kstatus *st);

/* 1 when |version| is one of v1, v1beta2, v1beta1. */
int api_conv_version_known(const char *version);

#endif
