// Beam's InetSocketAddressServerFactory, the one that opens a TaskManager's per-job Fn API
// servers (control, data, state, logging, provisioning, artifacts) for its SDK workers, bound to
// the address it is given. Beam's own builds them with NettyServerBuilder.forPort(address's
// port), on every interface, though the address it passes is loopback. This rewrites that one
// call in the class from Beam's jar (args[0]) to forAddress(address) and writes the class alone
// into a jar (args[1]), which engines/flink.py puts before Beam's jars on the cluster's classpath.

import java.io.FileOutputStream;
import java.io.IOException;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassWriter;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;

public final class LoopbackFnServers {
  private static final String FACTORY =
      "org/apache/beam/sdk/fn/server/ServerFactory$InetSocketAddressServerFactory.class";
  private static final String BUILDER =
      "org/apache/beam/vendor/grpc/v1p60p1/io/grpc/netty/NettyServerBuilder";

  /** createServer(services, address): forPort(address.getPort()) becomes forAddress(address). */
  private static final class BindToAddress extends MethodVisitor {
    int rewritten;

    BindToAddress(MethodVisitor method) {
      super(Opcodes.ASM9, method);
    }

    @Override
    public void visitMethodInsn(
        int opcode, String owner, String name, String descriptor, boolean isInterface) {
      if (owner.equals("java/net/InetSocketAddress") && name.equals("getPort")) {
        return; // the address stays on the stack for forAddress
      }
      if (owner.equals(BUILDER) && name.equals("forPort")) {
        rewritten++;
        super.visitMethodInsn(
            opcode, owner, "forAddress", "(Ljava/net/SocketAddress;)L" + BUILDER + ";", false);
        return;
      }
      super.visitMethodInsn(opcode, owner, name, descriptor, isInterface);
    }
  }

  public static void main(String[] args) throws IOException {
    byte[] original;
    try (JarFile jar = new JarFile(args[0])) {
      original = jar.getInputStream(jar.getEntry(FACTORY)).readAllBytes();
    }
    ClassReader reader = new ClassReader(original);
    ClassWriter writer = new ClassWriter(reader, 0);
    BindToAddress[] patched = new BindToAddress[1];
    reader.accept(
        new ClassVisitor(Opcodes.ASM9, writer) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String descriptor, String signature, String[] exceptions) {
            MethodVisitor method = super.visitMethod(access, name, descriptor, signature, exceptions);
            if (!name.equals("createServer")) {
              return method;
            }
            patched[0] = new BindToAddress(method);
            return patched[0];
          }
        },
        0);
    if (patched[0] == null || patched[0].rewritten != 1) {
      throw new IllegalStateException("no single NettyServerBuilder.forPort in " + FACTORY);
    }
    try (JarOutputStream out = new JarOutputStream(new FileOutputStream(args[1]))) {
      out.putNextEntry(new JarEntry(FACTORY));
      out.write(writer.toByteArray());
    }
  }
}
