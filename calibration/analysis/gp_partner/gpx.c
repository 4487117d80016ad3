// How does an unmount's grace period depend on what the other CPU is doing?
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdatomic.h>
static atomic_int stop;
static const char *mode;
static long long now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void *partner(void *a){
  pin(1); static char buf[1<<20]; int z=open("/dev/zero",O_RDONLY); volatile unsigned long x=0;
  while(!stop){
    if(!strcmp(mode,"user")) for(int i=0;i<100000;i++) x+=i;
    else if(!strcmp(mode,"getppid")) for(int i=0;i<1000;i++) syscall(SYS_getppid);
    else if(!strcmp(mode,"read1m")) { if(read(z,buf,sizeof buf)<0) break; }
    else if(!strcmp(mode,"umount")) { mount("/tmp/gpx/s","/tmp/gpx/d2",NULL,MS_BIND,NULL); umount2("/tmp/gpx/d2",0);} 
    else if(!strcmp(mode,"bindonly")) { mount("/tmp/gpx/s","/tmp/gpx/d2",NULL,MS_BIND,NULL); umount2("/tmp/gpx/d2",MNT_DETACH|0x10000000);} 
    else if(!strcmp(mode,"mountinfo")) { int f=open("/proc/self/mountinfo",O_RDONLY); while(read(f,buf,4096)>0); close(f);} 
    else if(!strcmp(mode,"opentree")) { int f=syscall(SYS_open_tree,-100,"/tmp/gpx/s",1|0x80000); if(f>=0) close(f);} 
    else if(!strcmp(mode,"nanosleep")) { struct timespec t={0,50000}; nanosleep(&t,0);} 
  }
  return 0;
}
static int cmp(const void*a,const void*b){long long x=*(long long*)a,y=*(long long*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  mode=argc>1?argv[1]:"idle"; int flags=argc>2?atoi(argv[2]):0; int n=argc>3?atoi(argv[3]):3000;
  if(unshare(CLONE_NEWNS)||mount(NULL,"/",NULL,MS_REC|MS_PRIVATE,NULL)){perror("ns");return 1;}
  mkdir("/tmp/gpx/s",0755); mkdir("/tmp/gpx/d",0755); mkdir("/tmp/gpx/d2",0755);
  if(mount("tmpfs","/tmp/gpx/s","tmpfs",0,NULL)){perror("tmpfs");return 1;}
  static char ovlopt[65536]; if(getenv("OVL")){ int L=atoi(getenv("OVL")); char *o=ovlopt; o+=sprintf(o,"lowerdir=");
    for(int i=0;i<L;i++){ char d[64]; sprintf(d,"/tmp/gpx/s/l%d",i); mkdir(d,0755); o+=sprintf(o,"%s%s",i?":":"",d);} 
    mkdir("/tmp/gpx/s/u",0755); mkdir("/tmp/gpx/s/w",0755); sprintf(o,",upperdir=/tmp/gpx/s/u,workdir=/tmp/gpx/s/w"); }
  pthread_t p; if(strcmp(mode,"idle")) pthread_create(&p,0,partner,0);
  pin(0); usleep(20000);
  long long *um=malloc(n*sizeof *um),*mo=malloc(n*sizeof *mo);
  for(int i=0;i<n;i++){
    long long t0=now();
    if(getenv("OVL")){ if(mount("overlay","/tmp/gpx/d","overlay",0,ovlopt)){perror("ovl");return 1;} } else
    if(mount("/tmp/gpx/s","/tmp/gpx/d",NULL,MS_BIND,NULL)){perror("bind");return 1;}
    long long t1=now(); if(umount2("/tmp/gpx/d",flags)){perror("umount");return 1;}
    long long t2=now(); mo[i]=t1-t0; um[i]=t2-t1;
  }
  stop=1; if(strcmp(mode,"idle")) pthread_join(p,0);
  double s=0; for(int i=0;i<n;i++) s+=um[i];
  qsort(um,n,sizeof *um,cmp); qsort(mo,n,sizeof *mo,cmp);
  printf("%-9s flags=%d umount2 p10 %6.1f p50 %6.1f p90 %6.1f mean %6.1f us | bind mount p50 %5.1f us\n",mode,flags,um[n/10]/1e3,um[n/2]/1e3,um[9*n/10]/1e3,s/n/1e3,mo[n/2]/1e3);
  umount2("/tmp/gpx/s",0); return 0;
}
