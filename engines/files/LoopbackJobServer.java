// Beam's job server driver (Flink's or Spark's: the class named first) with its job and artifact
// services bound to 127.0.0.1. Beam's own ServerFactory builds them with
// NettyServerBuilder.forPort, on every interface, whatever --job-host says (its expansion
// service does bind to --job-host). engines/common.py compiles this once against the job
// server's jars and starts `java LoopbackJobServer <driver class> <driver flags>` (Flink's:
// UnstagedFlinkJobServer, which builds on it).

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.beam.model.pipeline.v1.Endpoints.ApiServiceDescriptor;
import org.apache.beam.runners.jobsubmission.JobServerDriver;
import org.apache.beam.sdk.fn.server.ServerFactory;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.vendor.grpc.v1p60p1.io.grpc.BindableService;
import org.apache.beam.vendor.grpc.v1p60p1.io.grpc.Server;
import org.apache.beam.vendor.grpc.v1p60p1.io.grpc.netty.NettyServerBuilder;

public final class LoopbackJobServer {
  private static final String LOOPBACK = "127.0.0.1";

  /** Beam's InetSocketAddressServerFactory, bound to loopback. */
  static final class LoopbackServerFactory extends ServerFactory {
    @Override
    public Server allocateAddressAndCreate(
        List<BindableService> services, ApiServiceDescriptor.Builder descriptor)
        throws IOException {
      Server server = start(services, 0);
      descriptor.setUrl(LOOPBACK + ":" + server.getPort());
      return server;
    }

    @Override
    public Server create(List<BindableService> services, ApiServiceDescriptor descriptor)
        throws IOException {
      String url = descriptor.getUrl();
      return start(services, Integer.parseInt(url.substring(url.lastIndexOf(':') + 1)));
    }

    private static Server start(List<BindableService> services, int port) throws IOException {
      NettyServerBuilder builder =
          NettyServerBuilder.forAddress(new InetSocketAddress(LOOPBACK, port))
              .maxInboundMessageSize(Integer.MAX_VALUE)
              .permitKeepAliveTime(20, TimeUnit.SECONDS);
      services.forEach(builder::addService);
      return builder.build().start();
    }
  }

  /** The driver `args[0]` made from the other args, its job and artifact services on loopback. */
  static JobServerDriver loopback(String[] args) throws Exception {
    FileSystems.setDefaultPipelineOptions(PipelineOptionsFactory.create());
    Object driver =
        Class.forName(args[0])
            .getMethod("fromParams", String[].class)
            .invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    for (String name : new String[] {"jobServerFactory", "artifactServerFactory"}) {
      Field field = JobServerDriver.class.getDeclaredField(name);
      field.setAccessible(true);
      field.set(driver, new LoopbackServerFactory());
    }
    return (JobServerDriver) driver;
  }

  public static void main(String[] args) throws Exception {
    loopback(args).run();
  }
}
