"""The REST API: thin views that check input, find what the caller may see (access.py), call one
service and render the result, a module a resource (as urls.py lists them). Every URL below
/api/v1/users/<user_id>/ answers 404 for a user the caller may not see."""
