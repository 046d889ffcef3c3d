package dev.redlock.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The sample's HTTP API as the tests call it: the app on its local port, over one shared
 * client, each request bounded to 10 s.
 */
final class ShopHttp {

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private ShopHttp() {
	}

	/** A {@code POST} with no body. */
	static HttpResponse<String> post(int port, String path) throws IOException, InterruptedException {
		return send(request(port, path).POST(HttpRequest.BodyPublishers.noBody()).build());
	}

	/** A {@code GET} that accepts the given media type. */
	static HttpResponse<String> get(int port, String path, String accept) throws IOException, InterruptedException {
		return send(request(port, path).header("Accept", accept).GET().build());
	}

	private static HttpRequest.Builder request(int port, String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10));
	}

	private static HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
		return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
