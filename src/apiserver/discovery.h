/*
 * discovery.h: the discovery documents drad serves, built from the
 * resource table (resources.h): legacy (/api, /apis, /api/v1,
 * /apis/<group>, /apis/<group>/<version>) and aggregated
 * (apidiscovery.k8s.io v2 and v2beta1 APIGroupDiscoveryList), and the
 * Accept-header negotiation between them that kubectl relies on.
 *
 * Owner: helper "apilib" (src/apiserver/discovery.[ch]).
 *
 * Every builder appends compact JSON to |out| (a dra_buf the caller
 * owns) and returns DRA_OK, DRA_ENOTFOUND for a group or version that
 * is not served (|out| unchanged), or DRA_ENOMEM. The documents never
 * change while drad runs, so a caller may build them once and keep them.
 */
#ifndef DRA_APISERVER_DISCOVERY_H
#define DRA_APISERVER_DISCOVERY_H

#include "dra/base.h"

typedef enum api_disc_format {
    API_DISC_LEGACY,  /* APIVersions / APIGroupList, application/json */
    API_DISC_V2,      /* apidiscovery.k8s.io/v2 (kubectl 1.30+) */
    API_DISC_V2BETA1  /* apidiscovery.k8s.io/v2beta1 (kubectl 1.27-1.29) */
} api_disc_format;

/* Chooses the document for GET /api or /apis from the Accept header
 * (NULL: legacy): the first media type, in the client's order, that is
 * either an aggregated discovery type (application/json with
 * g=apidiscovery.k8s.io, v=v2 or v2beta1, as=APIGroupDiscoveryList) or a
 * plain JSON/wildcard type decides. *content_type (may be NULL) gets the
 * Content-Type to answer with, which must carry the g/v/as parameters
 * for aggregated documents or kubectl reads them as legacy. Static. */
api_disc_format api_disc_negotiate(const char *accept, const char **content_type);

/* GET /api: {"kind":"APIVersions","versions":["v1"],...}.
 * |server_address| (host:port, may be NULL) fills
 * serverAddressByClientCIDRs for 0.0.0.0/0; NULL writes null. */
dra_err api_disc_api_versions(const char *server_address, dra_buf *out);

/* GET /apis: APIGroupList of every served group but core. */
dra_err api_disc_group_list(dra_buf *out);

/* GET /apis/<group>: APIGroup. DRA_ENOTFOUND for an unknown group. */
dra_err api_disc_group(const char *group, dra_buf *out);

/* GET /api/v1 (group "") or /apis/<group>/<version>: APIResourceList
 * with every resource and subresource entry (name, singularName,
 * namespaced, kind, verbs, shortNames, categories). DRA_ENOTFOUND for
 * a group/version not served. */
dra_err api_disc_resource_list(const char *group, const char *version,
                               dra_buf *out);

/* GET /api (|core| 1) or /apis (|core| 0) as an aggregated
 * APIGroupDiscoveryList in |fmt| (API_DISC_V2 or API_DISC_V2BETA1;
 * DRA_EINVAL for API_DISC_LEGACY). Versions are listed preferred first:
 * resource.k8s.io v1, v1beta2, v1beta1. */
dra_err api_disc_aggregated(int core, api_disc_format fmt, dra_buf *out);

#endif
