-- wrk script: log in as one registered player, over and over.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"username":"benchuser","password":"bench password"}'
