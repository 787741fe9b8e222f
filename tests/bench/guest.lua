-- wrk script: create a guest per request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{}'
