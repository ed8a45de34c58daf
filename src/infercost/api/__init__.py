"""The JSON API behind the page: request models, routes, uploads and error handling."""
