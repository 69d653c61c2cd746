"""What the API reads and writes, a module a resource (as views/ is). Input serializers check shape and size;
output serializers render rows. Neither writes anything: the views call the services."""
